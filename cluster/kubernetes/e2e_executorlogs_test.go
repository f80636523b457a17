package kubernetes

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/examples"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// httpGetText fetches url and returns its status, Content-Type and body.
func httpGetText(ctx context.Context, url string) (int, string, string) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestKubernetesExecutorAttributesAndLogLink: an executor registers with
// Spark's Kubernetes attributes (its pod's name and namespace, the
// application, its id and host), the driver UI's REST API lists them, and
// its log link, the driver UI's route, answers its pod's log; a request
// for an executor the application does not have is refused.
func TestKubernetesExecutorAttributesAndLogLink(t *testing.T) {
	needCluster(t)
	conf := e2eConf(t, 1)
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID).Set(examples.KeySparkPiTaskDelay, "300ms").Set("spark.ui.port", "0")
	prefix := conf.Get(kubeconf.KeyExecutorPodNamePrefix, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		m, err := cluster.ParseMaster("k8s://" + controlPlane.Server())
		if err == nil {
			err = submitTo(ctx, m, conf, &syncBuffer{}, stderr, "SparkPi", "40")
		}
		done <- err
	}()
	var ui string
	testutil.Eventually(t, time.Minute, "the driver's tracking URL", func() bool {
		if m := trackingRe.FindStringSubmatch(stderr.String()); m != nil {
			ui = m[1]
		}
		return ui != ""
	})
	var ex executorSummary
	testutil.Eventually(t, time.Minute, "executor 1 in the driver's UI", func() bool {
		var ok bool
		ex, ok = uiExecutor(ctx, ui, appID, "1")
		return ok
	})
	want := map[string]string{"APP_ID": appID, "EXECUTOR_ID": "1", "KUBERNETES_NAMESPACE": "default",
		"KUBERNETES_POD_NAME": prefix + "-exec-1"}
	for k, v := range want {
		if ex.Attributes[k] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", k, ex.Attributes[k], v, ex.Attributes)
		}
	}
	if ex.Attributes["HOSTNAME"] == "" {
		t.Errorf("no HOSTNAME attribute: %v", ex.Attributes)
	}
	link := ex.ExecutorLogs["log"]
	if link != ui+"/executors/logs/?id=1&start=-4096" {
		t.Fatalf("executor 1's log link %q (logs %v), want the driver UI's route", link, ex.ExecutorLogs)
	}
	testutil.Eventually(t, time.Minute, "executor 1's log through its link", func() bool {
		code, ctype, body := httpGetText(ctx, link)
		return code == http.StatusOK && strings.HasPrefix(ctype, "text/plain") && strings.Contains(body, "Successfully registered with driver")
	})
	for _, id := range []string{"7", "1,spark-role!=executor", "../x"} {
		if code, _, body := httpGetText(ctx, ui+"/executors/logs/?id="+strings.NewReplacer(",", "%2C", "!", "%21", "=", "%3D").Replace(id)); code != http.StatusNotFound {
			t.Errorf("executor %q: %d %s; want 404", id, code, body)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
}
