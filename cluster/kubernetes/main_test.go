package kubernetes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/kubetest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"go.uber.org/goleak"
	"k8s.io/client-go/kubernetes"
)

// The end-to-end tests (TestKubernetes*) run on a real control plane
// started here from the binaries in $SPARKRPC_KUBE_BIN, with the sparkrpc
// binary built here on the pods' PATH.
var (
	controlPlane *kubetest.ControlPlane
	// adminClient is a clientset for the control plane's admin, for the
	// tests' own requests.
	adminClient kubernetes.Interface
	skipE2E     string
	// sparkrpcBin is the sparkrpc binary the pods run.
	sparkrpcBin string
	// sumOfSquaresBin is the example program of its own module, which the
	// image sumOfSquaresImage holds.
	sumOfSquaresBin string
	// fileCheckBin is the test program that reads files on executors,
	// which the image fileCheckImage holds.
	fileCheckBin string
)

// fileCheckImage is the image of the test program filecheck.
const fileCheckImage = "filecheck:test"

// sumOfSquaresImage is the image of the example program of its own module.
const sumOfSquaresImage = "sumofsquares:test"

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	bin := os.Getenv(kubetest.BinEnv)
	if bin == "" {
		skipE2E = kubetest.BinEnv + " is not set: build the control plane with internal/kubetest/build-controlplane DIR and set it to DIR"
	} else {
		dir, err := os.MkdirTemp("", "sparkrpc-k8s-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		sparkrpcBin = filepath.Join(dir, "sparkrpc")
		if err := testutil.GoBuild("github.com/sparkrpc/sparkrpc/cmd/sparkrpc", sparkrpcBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// The image sumofsquares:test holds the example program of its own
		// module, and only that: its pods find no other program first.
		imageDir := filepath.Join(dir, "images", "sumofsquares")
		sumOfSquaresBin = filepath.Join(imageDir, "sumofsquares")
		if err := testutil.GoBuild("../../examples/sumofsquares", sumOfSquaresBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fileCheckDir := filepath.Join(dir, "images", "filecheck")
		fileCheckBin = filepath.Join(fileCheckDir, "filecheck")
		if err := testutil.GoBuild("github.com/sparkrpc/sparkrpc/internal/testprog/filecheck", fileCheckBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cp, err := kubetest.Start(ctx, bin, kubetest.WithPathPrefix(dir), kubetest.WithNodeCapacity("16", "64Gi", 200),
			kubetest.WithImage(sumOfSquaresImage, imageDir), kubetest.WithImage(fileCheckImage, fileCheckDir))
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
