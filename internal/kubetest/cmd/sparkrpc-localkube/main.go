package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/kubetest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sparkrpc-localkube:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("bin", os.Getenv(kubetest.BinEnv), "folder of the control-plane binaries (default $"+kubetest.BinEnv+")")
	nodes := flag.Int("nodes", 1, "number of nodes")
	cpu := flag.String("node-cpu", "4", "cpu capacity of each node")
	memory := flag.String("node-memory", "8Gi", "memory capacity of each node")
	pods := flag.Int("node-pods", 110, "pod capacity of each node")
	pathPrefix := flag.String("path-prefix", "", "folder put in front of PATH for pod processes (where the sparkrpc binary is)")
	logDir := flag.String("log-dir", "", "folder for the components' logs (default: a temporary folder, removed at exit)")
	kubeconfig := flag.String("kubeconfig", "", "also write the admin kubeconfig to this file")
	timeout := flag.Duration("start-timeout", 2*time.Minute, "how long to wait for the control plane to be ready")
	var images []kubetest.Option
	flag.Func("image", "IMAGE=DIR: the programs of the image IMAGE are the files of folder DIR, where a pod's command is looked up first (repeatable)", func(v string) error {
		image, dir, ok := strings.Cut(v, "=")
		if !ok || image == "" || dir == "" {
			return fmt.Errorf("want IMAGE=DIR, not %q", v)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		images = append(images, kubetest.WithImage(image, abs))
		return nil
	})
	flag.Parse()
	if *bin == "" {
		return fmt.Errorf("--bin (or $%s) is required: build the binaries with internal/kubetest/build-controlplane DIR", kubetest.BinEnv)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opts := []kubetest.Option{
		kubetest.WithNodes(*nodes),
		kubetest.WithNodeCapacity(*cpu, *memory, *pods),
		kubetest.WithStartTimeout(*timeout),
	}
	opts = append(opts, images...)
	if *pathPrefix != "" {
		abs, err := filepath.Abs(*pathPrefix)
		if err != nil {
			return err
		}
		opts = append(opts, kubetest.WithPathPrefix(abs))
	}
	if *logDir != "" {
		opts = append(opts, kubetest.WithLogDir(*logDir))
	}
	started := time.Now()
	cp, err := kubetest.Start(ctx, *bin, opts...)
	if err != nil {
		return err
	}
	kc := cp.Kubeconfig()
	if *kubeconfig != "" {
		b, err := os.ReadFile(kc)
		if err == nil {
			err = os.WriteFile(*kubeconfig, b, 0o600)
		}
		if err != nil {
			_ = cp.Stop()
			return err
		}
		kc = *kubeconfig
	}
	fmt.Printf("control plane ready in %s\n", time.Since(started).Round(time.Millisecond))
	fmt.Printf("kubeconfig: %s\n", kc)
	fmt.Printf("master:     k8s://%s\n", cp.Server())
	fmt.Printf("logs:       %s\n", cp.LogDir())
	fmt.Printf("\n  export KUBECONFIG=%s\n  sparkrpc submit --master k8s://%s ...\n\nCtrl-C stops it.\n", kc, cp.Server())

	<-ctx.Done()
	fmt.Println("stopping")
	return cp.Stop()
}
