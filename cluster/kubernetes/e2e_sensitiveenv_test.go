package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubernetesProdSensitiveEnv: the value of a variable set by a key
// that spark.redaction.regex matches (spark.executorEnv.DB_PASSWORD,
// spark.kubernetes.driverEnv.DB_PASSWORD) never lands in a pod spec, which
// anyone who may get pods reads (docs/security.md: a reader of a pod spec
// sees no secret); submit refuses it with a typed error instead, pointing
// at secretKeyRef. Before, it was written into the pods' env as it was.
func TestKubernetesSensitiveEnvRefused(t *testing.T) {
	c := needCluster(t)
	value := fmt.Sprintf("hunter2-%d", time.Now().UnixNano())
	check := func(t *testing.T, key string, err error, stderr fmt.Stringer, pods []corev1.Pod) {
		t.Helper()
		for _, p := range pods {
			b, _ := json.Marshal(p.Spec)
			if strings.Contains(string(b), value) {
				t.Errorf("pod %s has the value of %s in its spec", p.Name, key)
			}
		}
		if err != nil && !errors.Is(err, kubeconf.ErrInvalidConfig) {
			t.Errorf("Submit = %v; want success or an error matching kubeconf.ErrInvalidConfig\n%s", err, stderr)
		}
		if err != nil && strings.Contains(err.Error(), value) {
			t.Errorf("the error shows the value: %v", err)
		}
	}
	t.Run("client mode, executor env", func(t *testing.T) {
		key := kubeconf.KeyExecutorEnvPrefix + "DB_PASSWORD"
		appID := kubeconf.NewAppID()
		conf := e2eConf(t, 1).Set(cluster.KeyAppID, appID).Set(key, value).Set(kubeconf.KeyDeleteOnTermination, "false")
		_, stderr, err := submit(testutil.Context(t, 2*time.Minute), t, conf, "SparkPi", "2")
		pods := executorPods(t, c, appID)
		t.Cleanup(func() {
			for _, p := range pods {
				_ = c.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{})
			}
		})
		check(t, key, err, stderr, pods)
	})
	t.Run("cluster mode, driver env", func(t *testing.T) {
		key := kubeconf.KeyDriverEnvPrefix + "DB_PASSWORD"
		prefix := fmt.Sprintf("se%d", time.Now().UnixNano()%1e9)
		deleteDriverPod(t, c, prefix+"-driver")
		conf := clusterConf(t, prefix).Set(key, value).Set(kubeconf.KeyWaitAppCompletion, "false")
		stderr, err := submitNoPanic(testutil.Context(t, time.Minute), t, conf)
		var pods []corev1.Pod
		if p, gerr := c.CoreV1().Pods("default").Get(context.Background(), prefix+"-driver", metav1.GetOptions{}); gerr == nil {
			pods = append(pods, *p)
		}
		check(t, key, err, stderr, pods)
	})
}
