package main

// kubernetes_bench.go gives `sparkrpc bench` the cluster managers of the
// executor-startup scenario: a local Kubernetes control plane (started from
// --kube-bin, default $SPARKRPC_KUBE_BIN, once per run) and local-cluster,
// each running an application that waits for its executors.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/bench"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/internal/kubetest"
)

// benchStartupApp is the application of the executor-startup scenario: it
// waits until spark.executor.instances executors have registered and hands
// their registration times to the run named by its argument.
const benchStartupApp = "sparkrpc.bench.ExecutorStartup"

// startupRuns maps a run's id to the channel its registration times go to.
var startupRuns sync.Map

var registerStartupApp = sync.OnceFunc(func() {
	cluster.RegisterApp(benchStartupApp, func(ctx context.Context, sc *cluster.AppContext, args []string) error {
		if len(args) != 1 {
			return errors.New("usage: " + benchStartupApp + " RUN_ID")
		}
		v, ok := startupRuns.Load(args[0])
		if !ok {
			return fmt.Errorf("no bench run %q in this process", args[0])
		}
		n, err := sc.Conf().GetInt(cluster.KeyNumExecutors, 0)
		if err != nil {
			return err
		}
		d, err := sc.Driver(ctx)
		if err != nil {
			return err
		}
		if err := d.WaitForExecutors(ctx, n); err != nil {
			return err
		}
		var times []time.Time
		for _, ex := range d.Executors() {
			times = append(times, ex.RegistrationTime)
		}
		v.(chan []time.Time) <- times
		return nil
	})
})

var startupSeq struct {
	sync.Mutex
	n int
}

// measureStartup submits the startup application with conf through submit
// and returns the executors' registration times from the submission.
func measureStartup(ctx context.Context, conf *actor.Conf, submit func(context.Context, cluster.SubmitConfig) error,
	master cluster.Master, exe string, executors int) ([]time.Duration, error) {
	registerStartupApp()
	startupSeq.Lock()
	startupSeq.n++
	id := strconv.Itoa(startupSeq.n)
	startupSeq.Unlock()
	ch := make(chan []time.Time, 1)
	startupRuns.Store(id, ch)
	defer startupRuns.Delete(id)
	conf.Set(cluster.KeyNumExecutors, strconv.Itoa(executors)).
		Set(cluster.KeyExecutorMemory, "64m").
		Set(cluster.KeyExecutorCores, "1").
		Set(cluster.KeyMinRegisteredRatio, "0").
		Set(cluster.KeyAppName, "executor-startup")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	err := submit(ctx, cluster.SubmitConfig{Master: master, Class: benchStartupApp, Args: []string{id}, Conf: conf,
		Executable: exe, Logger: zerolog.Nop()})
	if err != nil {
		return nil, err
	}
	select {
	case times := <-ch:
		out := make([]time.Duration, len(times))
		for i, t := range times {
			out[i] = t.Sub(start)
		}
		return out, nil
	default:
		return nil, errors.New("the application ended without reporting its executors")
	}
}

// startupClusters returns the bench options of the executor-startup
// scenario, and a function that stops what they started. kubeBin is the
// folder of the control-plane binaries ("" skips Kubernetes).
func startupClusters(kubeBin string) ([]bench.Option, func()) {
	exe, err := os.Executable()
	if err != nil {
		why := "cannot find the sparkrpc binary: " + err.Error()
		return []bench.Option{bench.WithStartup(bench.ImplKubernetes, bench.Startup{Skip: why}),
			bench.WithStartup(bench.ImplLocalCluster, bench.Startup{Skip: why})}, func() {}
	}
	local := bench.Startup{Run: func(ctx context.Context, n int) ([]time.Duration, error) {
		// 4 nodes with a core per executor (and one for the AM).
		workers := 4
		cores := (n+workers-1)/workers + 1
		m, err := cluster.ParseMaster(fmt.Sprintf("local-cluster[%d,%d,%d]", workers, cores, cores*1024))
		if err != nil {
			return nil, err
		}
		return measureStartup(ctx, actor.NewConf(), managers.Submit, m, exe, n)
	}}
	opts := []bench.Option{bench.WithStartup(bench.ImplLocalCluster, local)}
	if kubeBin == "" {
		return append(opts, bench.WithStartup(bench.ImplKubernetes, bench.Startup{
			Skip: "needs a Kubernetes control plane: set --kube-bin or " + kubetest.BinEnv +
				" to a folder built by internal/kubetest/build-controlplane"})), func() {}
	}
	var (
		once     sync.Once
		cp       *kubetest.ControlPlane
		startErr error
	)
	k8s := bench.Startup{Run: func(ctx context.Context, n int) ([]time.Duration, error) {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			cp, startErr = kubetest.Start(sctx, kubeBin, kubetest.WithNodeCapacity("64", "256Gi", 2*n+10))
		})
		if errors.Is(startErr, kubetest.ErrMissingBinary) {
			return nil, fmt.Errorf("%w: %v", bench.ErrUnavailable, startErr)
		}
		if startErr != nil {
			return nil, fmt.Errorf("starting the Kubernetes control plane: %w", startErr)
		}
		m, err := cluster.ParseMaster("k8s://" + cp.Server())
		if err != nil {
			return nil, err
		}
		// Spark's default allocation: batches of 10 pods a second.
		conf := actor.NewConf().
			Set(kubeconf.KeyContainerImage, "sparkrpc").
			Set(kubeconf.KeyExecutable, exe).
			Set(kubeconf.KeyExecutorRequestCores, "100m").
			Set(kubeconf.KeyExecutorMemoryOverhead, "64m").
			Set(kubeconf.KeyAuthSubmissionPrefix+kubeconf.AuthOAuthToken, cp.AdminToken()).
			Set(kubeconf.KeyAuthSubmissionPrefix+kubeconf.AuthCACertFile, cp.CAFile())
		return measureStartup(ctx, conf, kubernetes.Submit, m, exe, n)
	}}
	opts = append(opts, bench.WithStartup(bench.ImplKubernetes, k8s))
	return opts, func() {
		if cp != nil {
			_ = cp.Stop()
		}
	}
}

// kubeBinDefault is the default of --kube-bin: $SPARKRPC_KUBE_BIN.
func kubeBinDefault() string { return os.Getenv(kubetest.BinEnv) }
