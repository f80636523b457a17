package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubernetesRestrictedNamespace: in a namespace whose PodSecurity level
// is enforced as "restricted" (a plain pod is refused there), SparkPi runs
// in both deploy modes: the driver and executor pods pass the API server's
// admission as they are built by default.
func TestKubernetesRestrictedNamespace(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("restricted%d", time.Now().UnixNano()%1e9)
	testNamespace(t, c, ns)
	n, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}
	if _, err := c.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The enforcement is on: a plain pod is refused, once the admission
	// plugin's cache of namespaces has seen the label.
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	var refused error
	testutil.Eventually(t, 30*time.Second, "a plain pod to be refused in the restricted namespace", func() bool {
		_, refused = c.CoreV1().Pods(ns).Create(ctx, plain, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return refused != nil
	})
	if !strings.Contains(refused.Error(), "violates PodSecurity") {
		t.Fatalf("a plain pod in the restricted namespace: %v", refused)
	}

	prefix := fmt.Sprintf("rc%d", time.Now().UnixNano()%1e9)
	out, code := runSparkrpc(ctx, t, "submit", "--master", "k8s://"+controlPlane.Server(), "--num-executors", "2",
		"--executor-memory", "512m", "--conf", kubeconf.KeyNamespace+"="+ns, "--conf", kubeconf.KeyContainerImage+"=sparkrpc:test",
		"--conf", kubeconf.KeyExecutorPodNamePrefix+"="+prefix, "--conf", kubeconf.KeyBatchDelay+"=100ms",
		"--class", "SparkPi", "spark-internal", "4")
	if code != 0 {
		t.Fatalf("client mode: exit %d:\n%s", code, out)
	}
	checkPi(t, out, 4)

	prefix = fmt.Sprintf("rk%d", time.Now().UnixNano()%1e9)
	out, code = runSparkrpc(ctx, t, append(clusterArgs(t, prefix), "--conf", kubeconf.KeyNamespace+"="+ns,
		"--class", "SparkPi", "spark-internal", "4")...)
	if code != 0 {
		t.Fatalf("cluster mode: exit %d:\n%s", code, out)
	}
	logs, err := c.CoreV1().Pods(ns).GetLogs(prefix+"-driver", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkPi(t, string(logs), 4)
}
