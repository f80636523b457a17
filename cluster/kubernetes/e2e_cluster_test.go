package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runSparkrpc runs the sparkrpc binary with the test cluster's kubeconfig
// and returns its combined output and exit code.
func runSparkrpc(ctx context.Context, t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, sparkrpcBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+controlPlane.Kubeconfig())
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sparkrpc %v: %v", args, err)
	}
	return string(out), code
}

// clusterArgs are the submit arguments of a cluster-mode application; the
// driver pod authenticates with the admin token in a file given by
// spark.kubernetes.authenticate.driver.*, which overrides its service
// account's (the default account may do nothing; see
// TestKubernetesClusterModeServiceAccount for a driver with no such key).
func clusterArgs(t *testing.T, prefix string) []string {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(controlPlane.AdminToken()), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"submit", "--master", "k8s://" + controlPlane.Server(), "--deploy-mode", "cluster", "--num-executors", "2",
		"--executor-memory", "512m",
		"--conf", kubeconf.KeyContainerImage + "=sparkrpc:test",
		"--conf", kubeconf.KeyExecutorPodNamePrefix + "=" + prefix,
		"--conf", kubeconf.KeyBatchDelay + "=100ms",
		"--conf", kubeconf.KeyReportInterval + "=5s",
		"--conf", kubeconf.KeyAuthDriverPrefix + kubeconf.AuthOAuthTokenFile + "=" + tok,
		"--conf", kubeconf.KeyAuthDriverPrefix + kubeconf.AuthCACertFile + "=" + controlPlane.CAFile()}
}

// TestKubernetesClusterMode: a driver pod and executor pods owned by it;
// submit prints the driver pod's state changes and exits 0 with the
// application's success, non-zero with the reason of a failed one.
func TestKubernetesClusterMode(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("cm%d", time.Now().UnixNano()%1e9)
	args := append(clusterArgs(t, prefix), "--class", "SparkPi", "spark-internal", "4")
	out, code := runSparkrpc(ctx, t, args...)
	if code != 0 || !strings.Contains(out, "phase: Running") || !strings.Contains(out, "succeeded") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	logs, err := c.CoreV1().Pods("default").GetLogs(prefix+"-driver", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !piRe.Match(logs) {
		t.Fatalf("no Pi in the driver's log:\n%s", logs)
	}
	checkPi(t, string(logs), 4)
	_ = c.CoreV1().Pods("default").Delete(ctx, prefix+"-driver", metav1.DeleteOptions{})

	fprefix := fmt.Sprintf("cf%d", time.Now().UnixNano()%1e9)
	args = append(clusterArgs(t, fprefix), "--class", "ErrorApp", "spark-internal")
	out, code = runSparkrpc(ctx, t, args...)
	if code == 0 || !strings.Contains(out, "exit code") {
		t.Fatalf("a failed application: exit %d:\n%s", code, out)
	}
	_ = c.CoreV1().Pods("default").Delete(ctx, fprefix+"-driver", metav1.DeleteOptions{})
}

// TestKubernetesOwnProgram: a program of one's own, in a module of its own,
// submitted with every option after --class in both deploy modes, runs from
// its image (the local node maps the image to the program) and prints its
// exact result.
func TestKubernetesOwnProgram(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("op%d", time.Now().UnixNano()%1e9)
	image := []string{"--conf", kubeconf.KeyContainerImage + "=" + sumOfSquaresImage, "--conf", "spark.ui.enabled=false"}
	args := append(append(append([]string{"submit", "--class", "SumOfSquares"}, clusterArgs(t, prefix)[1:]...), image...),
		sumOfSquaresBin, "1", "2", "3", "4")
	out, code := runSparkrpc(ctx, t, args...)
	if code != 0 {
		t.Fatalf("cluster mode: exit %d:\n%s", code, out)
	}
	pod, err := c.CoreV1().Pods("default").Get(ctx, prefix+"-driver", metav1.GetOptions{})
	if err != nil || pod.Spec.Containers[0].Command[0] != "sumofsquares" || pod.Spec.Containers[0].Image != sumOfSquaresImage {
		t.Fatalf("the driver pod: %v %v", err, pod)
	}
	logs, err := c.CoreV1().Pods("default").GetLogs(prefix+"-driver", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), "Sum of squares is 30\n") {
		t.Fatalf("the driver's log: %v\n%s", err, logs)
	}
	_ = c.CoreV1().Pods("default").Delete(ctx, prefix+"-driver", metav1.DeleteOptions{})

	cprefix := fmt.Sprintf("oc%d", time.Now().UnixNano()%1e9)
	args = append(append([]string{"submit", "--class", "SumOfSquares", "--master", "k8s://" + controlPlane.Server(),
		"--num-executors", "2", "--executor-memory", "512m", "--conf", kubeconf.KeyExecutorPodNamePrefix + "=" + cprefix,
		"--conf", kubeconf.KeyBatchDelay + "=100ms"}, image...), sumOfSquaresBin, "5", "6")
	out, code = runSparkrpc(ctx, t, args...)
	if code != 0 || !strings.Contains(out, "Sum of squares is 61\n") {
		t.Fatalf("client mode: exit %d:\n%s", code, out)
	}
}

// TestKubernetesFiles: --files reach every executor pod through the
// driver's file server: a local file in client mode, a file of the image
// (local:///PATH) in cluster mode; a local path in cluster mode is refused.
func TestKubernetesFiles(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	given := filepath.Join(t.TempDir(), "given.txt")
	if err := os.WriteFile(given, []byte("from --files"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := []string{"--conf", kubeconf.KeyContainerImage + "=" + fileCheckImage, "--conf", "spark.ui.enabled=false"}
	cprefix := fmt.Sprintf("fc%d", time.Now().UnixNano()%1e9)
	args := append(append([]string{"submit", "--master", "k8s://" + controlPlane.Server(), "--num-executors", "2",
		"--executor-memory", "512m", "--files", given, "--conf", kubeconf.KeyExecutorPodNamePrefix + "=" + cprefix,
		"--conf", kubeconf.KeyBatchDelay + "=100ms"}, image...), fileCheckBin, "given.txt")
	out, code := runSparkrpc(ctx, t, args...)
	if code != 0 || !strings.Contains(out, "given.txt: from --files\nread on 2 executors\n") {
		t.Fatalf("client mode: exit %d:\n%s", code, out)
	}

	prefix := fmt.Sprintf("fk%d", time.Now().UnixNano()%1e9)
	base := append(append([]string{"submit"}, clusterArgs(t, prefix)[1:]...), image...)
	out, code = runSparkrpc(ctx, t, append(base, "--files", given, fileCheckBin, "given.txt")...)
	if code != 1 || !strings.Contains(out, "local:///PATH") {
		t.Fatalf("a local path in cluster mode: exit %d:\n%s", code, out)
	}
	out, code = runSparkrpc(ctx, t, append(base, "--files", "local://"+given, fileCheckBin, "given.txt")...)
	if code != 0 {
		t.Fatalf("cluster mode: exit %d:\n%s", code, out)
	}
	logs, err := c.CoreV1().Pods("default").GetLogs(prefix+"-driver", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), "given.txt: from --files\nread on 2 executors\n") {
		t.Fatalf("the driver's log: %v\n%s", err, logs)
	}
	_ = c.CoreV1().Pods("default").Delete(ctx, prefix+"-driver", metav1.DeleteOptions{})
}

// TestKubernetesKillAndStatus: --status reports the driver pod's phase;
// --kill ends the application and the executor pods are collected
// through their ownerReference.
func TestKubernetesKillAndStatus(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("ks%d", time.Now().UnixNano()%1e9)
	args := append(clusterArgs(t, prefix), "--conf", kubeconf.KeyWaitAppCompletion+"=false", "--conf", "spark.examples.sparkPi.taskDelay=2s",
		"--class", "SparkPi", "spark-internal", "200")
	out, code := runSparkrpc(ctx, t, args...)
	if code != 0 {
		t.Fatalf("submit: exit %d:\n%s", code, out)
	}
	driver := prefix + "-driver"
	var appID string
	testutil.Eventually(t, time.Minute, "the driver pod running and 2 executor pods owned by it", func() bool {
		// The node agent starts a pod's process before its status
		// reaches the API server: wait for the phase --status reads.
		if d, err := c.CoreV1().Pods("default").Get(ctx, driver, metav1.GetOptions{}); err != nil || d.Status.Phase != corev1.PodRunning {
			return false
		}
		l, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kubeconf.LabelRole + "=" + kubeconf.RoleExecutor})
		if err != nil {
			return false
		}
		n := 0
		for _, p := range l.Items {
			if strings.HasPrefix(p.Name, prefix+"-exec-") && len(p.OwnerReferences) == 1 && p.OwnerReferences[0].Name == driver {
				n++
				appID = p.Labels[kubeconf.LabelAppSelector]
			}
		}
		return n == 2
	})
	out, code = runSparkrpc(ctx, t, "submit", "--master", "k8s://"+controlPlane.Server(), "--status", "default:"+prefix+"-*")
	if code != 0 || !strings.Contains(out, "pod name: "+driver) || !strings.Contains(out, "phase: Running") {
		t.Fatalf("--status: exit %d:\n%s", code, out)
	}
	out, code = runSparkrpc(ctx, t, "submit", "--master", "k8s://"+controlPlane.Server(), "--kill", "default:"+driver)
	if code != 0 || !strings.Contains(out, "Deleting driver pod default:"+driver) {
		t.Fatalf("--kill: exit %d:\n%s", code, out)
	}
	testutil.Eventually(t, time.Minute, "the driver and executor pods gone", func() bool {
		return len(executorPods(t, c, appID)) == 0
	})
}
