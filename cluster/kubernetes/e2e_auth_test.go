package kubernetes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// appWatch records, while an application runs, every pod of it as the API
// server has it, its Secret, and the command line and environment of every
// process on this machine that belongs to it (the pods' processes, which
// the node runs with SPARK_APPLICATION_ID=<app id>).
type appWatch struct {
	mu      sync.Mutex
	pods    map[string][]byte // name -> the pod's JSON, every version seen
	procs   map[string][]byte // pid -> cmdline NUL environ, every version seen
	secret  *corev1.Secret
	stop    chan struct{}
	stopped chan struct{}
}

func watchApp(t *testing.T, c kubernetes.Interface, appID, secretName string) *appWatch {
	w := &appWatch{pods: map[string][]byte{}, procs: map[string][]byte{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	id := []byte(appID)
	go func() {
		defer close(w.stopped)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			l, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubeconf.LabelAppSelector + "=" + appID})
			s, serr := c.CoreV1().Secrets("default").Get(ctx, secretName, metav1.GetOptions{})
			cancel()
			dirs, _ := filepath.Glob("/proc/[0-9]*")
			w.mu.Lock()
			if err == nil {
				for i := range l.Items {
					b, _ := json.Marshal(&l.Items[i])
					addVersion(w.pods, l.Items[i].Name, b)
				}
			}
			if serr == nil && w.secret == nil {
				w.secret = s
			}
			for _, d := range dirs {
				cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
				env, _ := os.ReadFile(filepath.Join(d, "environ"))
				if bytes.Contains(cmd, id) || bytes.Contains(env, id) {
					addVersion(w.procs, filepath.Base(d), append(append(cmd, 0), env...))
				}
			}
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

// addVersion keeps b under key unless it is the version last kept.
func addVersion(m map[string][]byte, key string, b []byte) {
	if !bytes.HasSuffix(m[key], b) {
		m[key] = append(m[key], b...)
	}
}

func (w *appWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.stopped
}

// check fails when a secret is in a pod spec or a process's command line or
// environment, or when fewer than the pods and processes wanted were seen
// (procs: how many processes' command lines have each word).
func (w *appWatch) check(t *testing.T, secrets []string, pods int, procs map[string]int) {
	t.Helper()
	w.end()
	for _, secret := range secrets {
		if len(secret) < 16 {
			t.Fatalf("secret %q: too short to search for", secret)
		}
		for name, b := range w.pods {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("pod %s holds a secret in its spec (as the API server has it):\n%.2000s", name, b)
			}
		}
		for pid, b := range w.procs {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("process %s holds a secret in its command line or environment: %q", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
			}
		}
	}
	if len(w.pods) < pods {
		t.Errorf("saw %d pods of the application, want %d", len(w.pods), pods)
	}
	for word, n := range procs {
		seen := 0
		for _, b := range w.procs {
			cmd, _, _ := bytes.Cut(b, []byte{0, 0})
			if bytes.Contains(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), []byte(word)) {
				seen++
			}
		}
		if seen < n {
			t.Errorf("saw %d processes of the application running %q, want %d", seen, word, n)
		}
	}
	t.Logf("searched %d pods and %d processes of the application", len(w.pods), len(w.procs))
}

// noSecretInConfigMaps fails when a config map of the namespace holds secret.
func noSecretInConfigMaps(t *testing.T, c kubernetes.Interface, secret string) {
	t.Helper()
	l, err := c.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range l.Items {
		b, _ := json.Marshal(&cm)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("config map %s holds the secret", cm.Name)
		}
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestKubernetesAuthClientMode: SparkPi with spark.authenticate in client
// mode and no secret given: submit generates one, its executor pods get it
// from a mounted Secret and register; no pod spec, config map, log line or
// process of the application holds it; the Secret is deleted at the end.
func TestKubernetesAuthClientMode(t *testing.T) {
	c := needCluster(t)
	// Tasks that take a while: every executor process lives long enough to be seen.
	conf := e2eConf(t, 2).Set(netty.KeyAuthenticate, "true").Set("spark.examples.sparkPi.taskDelay", "500ms")
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID)
	prefix := conf.Get(kubeconf.KeyExecutorPodNamePrefix, "")
	w := watchApp(t, c, appID, prefix+"-auth-secret")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, err := submit(ctx, t, conf, "SparkPi", "4")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	checkPi(t, stdout.String(), 4)
	secret := conf.Get(netty.KeyAuthenticateSecret, "")
	if !hex64.MatchString(secret) {
		t.Fatalf("the generated secret %q is not 32 bytes in hex", secret)
	}
	w.check(t, []string{secret}, 2, map[string]int{" executor ": 2})
	if w.secret == nil || string(w.secret.Data["auth-secret"]) != secret || w.secret.Labels[kubeconf.LabelAppSelector] != appID {
		t.Errorf("the application's Secret while it ran: %+v", w.secret)
	}
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Errorf("submit's output holds the secret:\n%s", stderr)
	}
	noSecretInConfigMaps(t, c, secret)
	if _, err := c.CoreV1().Secrets("default").Get(context.Background(), prefix+"-auth-secret", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the application's Secret after it ended: %v, want it deleted", err)
	}
}

// TestKubernetesAuthClusterMode: SparkPi with spark.authenticate and a
// given secret in cluster mode, the driver pod authenticating to the API
// server with spark.kubernetes.authenticate.driver.oauthToken: the driver
// pod mounts the Secret that carries both (and owns it), its executor pods
// mount the shared secret alone; neither value is in a pod's arguments (the
// secret used to be, as --conf spark.authenticate.secret=...), a process's
// command line or environment, or a log.
func TestKubernetesAuthClusterMode(t *testing.T) {
	c := needCluster(t)
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := hex.EncodeToString(b[:])
	prefix := fmt.Sprintf("ca%d", time.Now().UnixNano()%1e9)
	appID := kubeconf.NewAppID()
	conf := actor.NewConf().
		Set(cluster.KeyDeployMode, "cluster").
		Set(cluster.KeyAppID, appID).
		Set(cluster.KeyNumExecutors, "2").
		Set(cluster.KeyExecutorMemory, "512m").
		Set(kubeconf.KeyContainerImage, "sparkrpc:test").
		Set(kubeconf.KeyExecutorPodNamePrefix, prefix).
		Set(kubeconf.KeyBatchDelay, "100ms").
		Set(kubeconf.KeyReportInterval, "5s").
		Set(kubeconf.KeyAuthDriverPrefix+kubeconf.AuthOAuthToken, controlPlane.AdminToken()).
		Set(kubeconf.KeyAuthDriverPrefix+kubeconf.AuthCACertFile, controlPlane.CAFile()).
		Set(netty.KeyAuthenticate, "true").
		Set(netty.KeyAuthenticateSecret, secret).
		Set("spark.examples.sparkPi.taskDelay", "500ms")
	w := watchApp(t, c, appID, prefix+"-auth-secret")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	driver := prefix + "-driver"
	defer func() { _ = c.CoreV1().Pods("default").Delete(context.Background(), driver, metav1.DeleteOptions{}) }()
	_, stderr, err := submit(ctx, t, conf, "SparkPi", "4")
	logs, lerr := c.CoreV1().Pods("default").GetLogs(driver, &corev1.PodLogOptions{}).DoRaw(ctx)
	// Whatever the outcome, the secret must be nowhere.
	w.check(t, []string{secret, controlPlane.AdminToken()}, 3, map[string]int{" executor ": 2, " driver ": 1})
	if err != nil {
		t.Fatalf("submit: %v\n%s\ndriver log (%v):\n%s", err, stderr, lerr, logs)
	}
	checkPi(t, string(logs), 4)
	for _, s := range []string{secret, controlPlane.AdminToken()} {
		if bytes.Contains(logs, []byte(s)) || strings.Contains(stderr.String(), s) {
			t.Errorf("a log holds a secret")
		}
		noSecretInConfigMaps(t, c, s)
	}
	s, err := c.CoreV1().Secrets("default").Get(ctx, prefix+"-auth-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the application's Secret: %v", err)
	}
	if string(s.Data["auth-secret"]) != secret || s.Labels[kubeconf.LabelAppSelector] != appID || len(s.OwnerReferences) != 1 ||
		s.OwnerReferences[0].Name != driver {
		t.Fatalf("the application's Secret: labels %v, owners %+v", s.Labels, s.OwnerReferences)
	}
	// The garbage collector removes it with the driver pod.
	if err := c.CoreV1().Pods("default").Delete(ctx, driver, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, "the Secret collected with its driver pod", func() bool {
		_, err := c.CoreV1().Secrets("default").Get(ctx, prefix+"-auth-secret", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
