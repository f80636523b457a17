package executorpods

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/kubetest"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The end-to-end test of the allocator (TestKubernetesAllocatorIO) runs on
// a real control plane started here from the binaries in
// $SPARKRPC_KUBE_BIN; its pods run a stand-in executor.
var (
	controlPlane *kubetest.ControlPlane
	// adminClient is a clientset for the control plane's admin, for the
	// tests' own requests.
	adminClient kubernetes.Interface
	skipE2E     string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	bin := os.Getenv(kubetest.BinEnv)
	if bin == "" {
		skipE2E = kubetest.BinEnv + " is not set: build the control plane with internal/kubetest/build-controlplane DIR and set it to DIR"
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cp, err := kubetest.Start(ctx, bin, kubetest.WithNodeCapacity("16", "64Gi", 200))
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the control plane:", err)
			return 1
		}
		controlPlane = cp
		// Its transport is the control plane's own: Stop closes its idle
		// connections.
		adminClient, err = kubernetes.NewForConfig(cp.RESTConfig())
		if err != nil {
			fmt.Fprintln(os.Stderr, "the admin clientset:", err)
			_ = cp.Stop()
			return 1
		}
	}
	code := m.Run()
	if controlPlane != nil {
		// Stop it before looking for leaks: the clients' connections to
		// the API server end with it.
		if err := controlPlane.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

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

func executorPods(t *testing.T, c kubernetes.Interface, appID string) []corev1.Pod {
	t.Helper()
	l, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: Selector(appID)})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}
