package kubernetes

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/examples"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// needCluster skips the test without a control plane; otherwise it points
// KUBECONFIG at it and returns its admin clientset, for the test's own
// requests.
func needCluster(t *testing.T) kubernetes.Interface {
	t.Helper()
	if controlPlane == nil {
		t.Skip(skipE2E)
	}
	t.Setenv("KUBECONFIG", controlPlane.Kubeconfig())
	return adminClient
}

type syncBuffer = testutil.SyncBuffer

// e2eConf is a client-mode application's configuration on the test cluster.
func e2eConf(t *testing.T, executors int) *actor.Conf {
	return actor.NewConf().
		Set(kubeconf.KeyContainerImage, "sparkrpc:test").
		Set(cluster.KeyNumExecutors, fmt.Sprint(executors)).
		Set(cluster.KeyExecutorMemory, "512m").
		Set(kubeconf.KeyBatchDelay, "100ms").
		Set(kubeconf.KeyExecutorPodNamePrefix, fmt.Sprintf("t%d", time.Now().UnixNano()%1e9)).
		Set(kubeconf.KeyExecutorLabelPrefix+"test", "e2e")
}

func submit(ctx context.Context, t *testing.T, conf *actor.Conf, class string, args ...string) (stdout, stderr *syncBuffer, err error) {
	t.Helper()
	m, err := cluster.ParseMaster("k8s://" + controlPlane.Server())
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	return stdout, stderr, submitTo(ctx, m, conf, stdout, stderr, class, args...)
}

// submitTo submits to master m with the output and the driver's log
// (Info and above) going to stdout and stderr.
func submitTo(ctx context.Context, m cluster.Master, conf *actor.Conf, stdout, stderr io.Writer, class string, args ...string) error {
	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: true}).Level(zerolog.InfoLevel)
	return Submit(ctx, cluster.SubmitConfig{Master: m, Class: class, Args: args, Conf: conf, Stdout: stdout, Stderr: stderr, Logger: log})
}

var piRe = regexp.MustCompile(`Pi is roughly ([0-9.]+)`)

func wantPi(t *testing.T, slices int) string {
	t.Helper()
	fn, ok := endpoints.LookupTask(examples.SparkPiTask)
	if !ok {
		t.Fatal("SparkPi's task is not registered")
	}
	const samples = 100000
	var inside uint64
	for i := range slices {
		payload := make([]byte, 24)
		binary.BigEndian.PutUint64(payload, uint64(i))
		binary.BigEndian.PutUint64(payload[8:], samples)
		r, err := fn(context.Background(), endpoints.TaskContext{Partition: i}, payload)
		if err != nil || len(r) != 8 {
			t.Fatalf("SparkPi task %d: %v", i, err)
		}
		inside += binary.BigEndian.Uint64(r)
	}
	return fmt.Sprint(4.0 * float64(inside) / float64(samples*slices))
}

func checkPi(t *testing.T, stdout string, slices int) {
	t.Helper()
	m := piRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no Pi in the output: %q", stdout)
	}
	if want := wantPi(t, slices); m[1] != want {
		t.Fatalf("Pi is %s, want %s", m[1], want)
	}
}

func executorPods(t *testing.T, c kubernetes.Interface, appID string) []corev1.Pod {
	t.Helper()
	l, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: executorpods.Selector(appID)})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// TestKubernetesClientModeSparkPi: 2 executor pods with Spark's names,
// labels and requests; the exact result; no pod left.
func TestKubernetesClientModeSparkPi(t *testing.T) {
	c := needCluster(t)
	conf := e2eConf(t, 2)
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID)
	var seen []corev1.Pod
	var mu sync.Mutex
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() { // record the pods while the application runs
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			l, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: executorpods.Selector(appID)})
			if err == nil && len(l.Items) > 0 {
				mu.Lock()
				if len(l.Items) >= len(seen) {
					seen = l.Items
				}
				mu.Unlock()
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, err := submit(ctx, t, conf, "SparkPi", "4")
	close(stop)
	<-watched
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	checkPi(t, stdout.String(), 4)
	if !regexp.MustCompile(`(?m)^tracking URL: http://\S+:\d+$`).MatchString(stderr.String()) {
		t.Errorf("submit printed no tracking URL (the driver's UI):\n%s", stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("saw %d executor pods, want 2", len(seen))
	}
	prefix := conf.Get(kubeconf.KeyExecutorPodNamePrefix, "")
	for _, p := range seen {
		id := p.Labels[kubeconf.LabelExecutorID]
		if p.Name != prefix+"-exec-"+id || p.Labels[kubeconf.LabelRole] != kubeconf.RoleExecutor || p.Labels[kubeconf.LabelAppSelector] != appID ||
			p.Labels[kubeconf.LabelAppName] != "sparkpi" || p.Labels["test"] != "e2e" {
			t.Errorf("pod %s labels %v", p.Name, p.Labels)
		}
		res := p.Spec.Containers[0].Resources
		if q := res.Requests[corev1.ResourceMemory]; q.Cmp(resource.MustParse("896Mi")) != 0 {
			t.Errorf("pod %s memory request %s, want 896Mi (512m + 384m overhead)", p.Name, q.String())
		}
		if q := res.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("1")) != 0 {
			t.Errorf("pod %s cpu request %s", p.Name, q.String())
		}
	}
	if left := executorPods(t, c, appID); len(left) != 0 {
		t.Fatalf("%d executor pods left after the application", len(left))
	}
}

// TestKubernetesExecutorPodDeleted: an executor pod deleted mid-job is
// replaced, and the job gives the exact result.
func TestKubernetesExecutorPodDeleted(t *testing.T) {
	c := needCluster(t)
	conf := e2eConf(t, 2)
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID).Set(examples.KeySparkPiTaskDelay, "300ms")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	deleted := make(chan string, 1)
	go func() {
		defer close(deleted)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			l, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: executorpods.Selector(appID)})
			running := 0
			if err == nil {
				for _, p := range l.Items {
					if p.Status.Phase == corev1.PodRunning {
						running++
					}
				}
			}
			if running == 2 {
				time.Sleep(time.Second) // let tasks start on it
				name := l.Items[0].Name
				if err := c.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
					deleted <- name
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	stdout, stderr, err := submit(ctx, t, conf, "SparkPi", "20")
	name := <-deleted
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	if name == "" {
		t.Fatal("no executor pod was deleted")
	}
	checkPi(t, stdout.String(), 20)
	if !strings.Contains(stderr.String(), "deleted by a user or the framework") || !strings.Contains(stderr.String(), "executor=3") {
		t.Fatalf("no replacement of deleted pod %s in the log:\n%s", name, stderr)
	}
	if left := executorPods(t, c, appID); len(left) != 0 {
		t.Fatalf("%d executor pods left", len(left))
	}
}

// TestKubernetesBadInputs: each a clear, typed error within seconds.
func TestKubernetesBadInputs(t *testing.T) {
	c := needCluster(t)
	t.Run("unreachable", func(t *testing.T) {
		conf := e2eConf(t, 1).Set(kubeconf.KeySubmissionRequestTimeout, "1000").Set(kubeconf.KeySubmissionConnectionTimeout, "1000")
		m, _ := cluster.ParseMaster("k8s://https://127.0.0.1:1")
		start := time.Now()
		err := Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf})
		if !errors.Is(err, kubeclient.ErrUnreachable) || time.Since(start) > 15*time.Second {
			t.Fatalf("Submit = %v after %s", err, time.Since(start))
		}
	})
	t.Run("bad token", func(t *testing.T) {
		conf := e2eConf(t, 1).Set(kubeconf.KeyAuthSubmissionPrefix+kubeconf.AuthOAuthToken, "not-a-token")
		_, _, err := submit(context.Background(), t, conf, "SparkPi")
		if !errors.Is(err, kubeclient.ErrUnauthorized) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), kubeconf.AuthOAuthToken) {
			t.Fatalf("Submit = %v", err)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		controlPlane.AddToken("nobody-token", "nobody")
		conf := e2eConf(t, 1).Set(kubeconf.KeyAuthSubmissionPrefix+kubeconf.AuthOAuthToken, "nobody-token")
		_, _, err := submit(context.Background(), t, conf, "SparkPi")
		if !errors.Is(err, kubeclient.ErrForbidden) || !strings.Contains(err.Error(), "list") || !strings.Contains(err.Error(), "pods") {
			t.Fatalf("Submit = %v", err)
		}
	})
	t.Run("missing namespace", func(t *testing.T) {
		conf := e2eConf(t, 1).Set(kubeconf.KeyNamespace, "no-such-namespace")
		_, _, err := submit(context.Background(), t, conf, "SparkPi")
		if !errors.Is(err, kubeclient.ErrNamespaceNotFound) || !strings.Contains(err.Error(), "no-such-namespace") {
			t.Fatalf("Submit = %v", err)
		}
	})
	t.Run("command fails at start", func(t *testing.T) {
		conf := e2eConf(t, 1).Set(kubeconf.KeyExecutable, "false")
		appID := kubeconf.NewAppID()
		conf.Set(cluster.KeyAppID, appID)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		_, stderr, err := submit(ctx, t, conf, "SparkPi", "2")
		if !errors.Is(err, executorpods.ErrTooManyFailures) || !strings.Contains(err.Error(), "exit code 1") {
			t.Fatalf("Submit = %v after %s\n%s", err, time.Since(start), stderr)
		}
		t.Logf("failed after %s: %v", time.Since(start), err)
		if left := executorPods(t, c, appID); len(left) != 0 {
			t.Fatalf("%d executor pods left", len(left))
		}
	})
	t.Run("too much cpu", func(t *testing.T) {
		conf := e2eConf(t, 1).Set(cluster.KeyExecutorCores, "1000").Set(cluster.KeyMaxRegisteredWait, "60s")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		m, _ := cluster.ParseMaster("k8s://" + controlPlane.Server())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			err := Submit(ctx, cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf, Stderr: pw})
			pw.Close()
			done <- err
		}()
		found := make(chan string, 1)
		go func() {
			var all bytes.Buffer
			buf := make([]byte, 4096)
			for {
				n, err := pr.Read(buf)
				all.Write(buf[:n])
				if strings.Contains(all.String(), "Insufficient cpu") {
					found <- all.String()
					_, _ = io.Copy(io.Discard, pr)
					return
				}
				if err != nil {
					found <- ""
					return
				}
			}
		}()
		start := time.Now()
		select {
		case out := <-found:
			if out == "" {
				t.Fatal("submit ended without the scheduler's reason")
			}
			t.Logf("scheduler's reason shown after %s", time.Since(start))
		case <-time.After(30 * time.Second):
			t.Fatal("no FailedScheduling reason within 30s")
		}
		cancel()
		<-done
	})
}
