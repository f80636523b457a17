package kubernetes

// e2e_failures_test.go: what a shared cluster does to an application's
// executor pods (a ResourceQuota that admits only some, an image that
// cannot be pulled, a pod deleted while its executor runs a task), on the
// local control plane.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/examples"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// quotaNamespace makes a namespace whose ResourceQuota name admits pods
// pods, and waits until the namespace's default service account exists
// (before, the API server refuses every pod).
func quotaNamespace(t *testing.T, c kubernetes.Interface, name string, pods int) string {
	t.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("quota-%d", time.Now().UnixNano()%1e9)
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(pods), resource.DecimalSI)}}}
	q, err := c.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The local control plane runs no quota controller: the test counts
	// the empty namespace's usage itself; the API server's quota admission
	// then adds each pod it admits.
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}
	if _, err := c.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, "the namespace's default service account", func() bool {
		_, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	return ns
}

// TestKubernetesQuotaAdmitsSome: a ResourceQuota admits 2 of the 4
// executor pods wanted; the refusals are back-pressure, logged with the
// quota's name, and SparkPi finishes on 2 executors with the exact result.
func TestKubernetesQuotaAdmitsSome(t *testing.T) {
	c := needCluster(t)
	ns := quotaNamespace(t, c, "two-pods", 2)
	conf := e2eConf(t, 4)
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID).Set(kubeconf.KeyNamespace, ns).Set(cluster.KeyMinRegisteredRatio, "0.5")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, err := submit(ctx, t, conf, "SparkPi", "8")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	checkPi(t, stdout.String(), 8)
	log := stderr.String()
	if !strings.Contains(log, `ResourceQuota "two-pods" is used up`) || !strings.Contains(log, "retrying with backoff") {
		t.Fatalf("no refusal naming the quota in the log:\n%s", log)
	}
	if n := strings.Count(log, `Registered executor`); n != 2 {
		t.Errorf("%d executors registered, want the 2 the quota admits:\n%s", n, log)
	}
}

// TestKubernetesUnpullableImage: executor pods whose image cannot be pulled
// (the node agent reports ErrImagePull) are executor failures at once, so
// spark.executor.maxNumFailures ends the application, naming the image,
// instead of a wait of spark.kubernetes.allocation.executor.timeout.
func TestKubernetesUnpullableImage(t *testing.T) {
	needCluster(t)
	const image = "unpullable/sparkrpc:test"
	conf := e2eConf(t, 1)
	conf.Set(cluster.KeyAppID, kubeconf.NewAppID()).Set(kubeconf.KeyExecutorContainerImage, image).
		Set(cluster.KeyMaxExecutorFailures, "2").Set(cluster.KeyMaxRegisteredWait, "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	_, stderr, err := submit(ctx, t, conf, "SparkPi", "2")
	if err == nil {
		t.Fatalf("the application succeeded without executors:\n%s", stderr)
	}
	if !errors.Is(err, executorpods.ErrTooManyFailures) || !strings.Contains(err.Error(), image) || !strings.Contains(err.Error(), "ErrImagePull") {
		t.Fatalf("submit = %v; want too many executor failures naming ErrImagePull and %s\n%s", err, image, stderr)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the application took %s to fail", d)
	}
	log := stderr.String()
	// Once as a log line, once as a status line: not once per pod.
	if n := strings.Count(log, "cannot start: ErrImagePull for image "+image); n == 0 || n > 2 {
		t.Errorf("the image failure is printed %d times:\n%s", n, log)
	}
	if prefix := conf.Get(kubeconf.KeyExecutorPodNamePrefix, ""); strings.Contains(log, prefix+"-exec-3") {
		t.Errorf("a third executor pod was created after 2 failures:\n%s", log)
	}
}

// executorSummary is what the test reads of the driver UI's executors.
type executorSummary struct {
	ID             string `json:"id"`
	IsActive       bool   `json:"isActive"`
	ActiveTasks    int    `json:"activeTasks"`
	FailedTasks    int    `json:"failedTasks"`
	CompletedTasks int    `json:"completedTasks"`
	RemoveReason   string `json:"removeReason"`
	// Attributes and ExecutorLogs are Spark's executor attributes and log links.
	Attributes   map[string]string `json:"attributes"`
	ExecutorLogs map[string]string `json:"executorLogs"`
}

// uiExecutor reads executor id from the driver UI at base (all executors,
// removed ones too).
func uiExecutor(ctx context.Context, base, appID, id string) (executorSummary, bool) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base+"/api/v1/applications/"+appID+"/allexecutors", nil)
	if err != nil {
		return executorSummary{}, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return executorSummary{}, false
	}
	defer resp.Body.Close()
	var all []executorSummary
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&all) != nil {
		return executorSummary{}, false
	}
	for _, e := range all {
		if e.ID == id {
			return e, true
		}
	}
	return executorSummary{}, false
}

var trackingRe = regexp.MustCompile(`(?m)^tracking URL: (http://\S+:\d+)$`)

// TestKubernetesPodDeletedWhileRunningTask: an executor pod deleted while
// its executor runs a (slow) task is decommissioning, not lost: the task
// finishes on it, none of its tasks moves, and the executor leaves once
// idle; the job gives the exact result.
func TestKubernetesPodDeletedWhileRunningTask(t *testing.T) {
	c := needCluster(t)
	conf := e2eConf(t, 2)
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID).Set(examples.KeySparkPiTaskDelay, "2s")
	prefix := conf.Get(kubeconf.KeyExecutorPodNamePrefix, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type result struct {
		stdout, stderr *syncBuffer
		err            error
	}
	done := make(chan result, 1)
	var stderrBuf *syncBuffer
	started := make(chan *syncBuffer, 1)
	go func() {
		stdout, stderr := &syncBuffer{}, &syncBuffer{}
		started <- stderr
		m, err := cluster.ParseMaster("k8s://" + controlPlane.Server())
		if err == nil {
			err = submitTo(ctx, m, conf, stdout, stderr, "SparkPi", "10")
		}
		done <- result{stdout, stderr, err}
	}()
	stderrBuf = <-started
	var ui string
	testutil.Eventually(t, time.Minute, "the driver's tracking URL", func() bool {
		m := trackingRe.FindStringSubmatch(stderrBuf.String())
		if m != nil {
			ui = m[1]
		}
		return m != nil
	})
	testutil.Eventually(t, time.Minute, "executor 1 running a task", func() bool {
		e, ok := uiExecutor(ctx, ui, appID, "1")
		return ok && e.ActiveTasks > 0
	})
	before, _ := uiExecutor(ctx, ui, appID, "1")
	if err := c.CoreV1().Pods("default").Delete(ctx, prefix+"-exec-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var last executorSummary
	testutil.Eventually(t, time.Minute, "executor 1 removed", func() bool {
		e, ok := uiExecutor(ctx, ui, appID, "1")
		if ok {
			last = e
		}
		return ok && !e.IsActive
	})
	r := <-done
	if r.err != nil {
		t.Fatalf("submit: %v\n%s", r.err, r.stderr)
	}
	checkPi(t, r.stdout.String(), 10)
	if last.FailedTasks != 0 || last.CompletedTasks < before.CompletedTasks+before.ActiveTasks {
		t.Errorf("executor 1 before its pod's deletion %+v, at its removal %+v: its running task did not finish on it", before, last)
	}
	log := r.stderr.String()
	if !strings.Contains(log, "Executor 1 is decommissioning") || strings.Contains(last.RemoveReason, "deleted by a user or the framework") {
		t.Errorf("executor 1 removed for %q; want it decommissioned first:\n%s", last.RemoveReason, log)
	}
}
