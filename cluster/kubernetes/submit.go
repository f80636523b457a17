package kubernetes

// submit.go runs an application with its driver in this process and its
// executors in pods (client mode, and the driver pod of cluster mode):
// Spark's KubernetesClusterSchedulerBackend.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Submit runs the application cfg describes on the Kubernetes master
// cfg.Master (Kind cluster.MasterKubernetes): in client mode the driver runs
// here and its executors in pods; in cluster mode a driver pod runs it, and
// Submit follows that pod. It returns nil only when the application
// succeeded.
func Submit(ctx context.Context, cfg cluster.SubmitConfig) error {
	if cfg.Master.Kind != cluster.MasterKubernetes {
		return fmt.Errorf("%w: %q is not a k8s:// master", cluster.ErrInvalidMaster, cfg.Master.String())
	}
	if cfg.Conf == nil {
		cfg.Conf = actor.NewConf()
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if _, ok := cluster.LookupApp(cfg.Class); !ok {
		return &cluster.UnknownAppError{Name: cfg.Class}
	}
	conf := cfg.Conf
	conf.SetIfMissing(cluster.KeyAppName, cfg.Class)
	conf.Set(cluster.KeyMaster, cfg.Master.String())
	switch mode := conf.Get(cluster.KeyDeployMode, "client"); mode {
	case "client":
		return runDriver(ctx, cfg, false)
	case "cluster":
		return submitCluster(ctx, cfg)
	default:
		return fmt.Errorf("%w: deploy mode must be client or cluster, not %q", cluster.ErrInvalidState, mode)
	}
}

// RunDriverPod runs the application as the driver inside a driver pod
// (cluster mode): credentials from the pod (in-cluster configuration or
// spark.kubernetes.authenticate.driver.*), executors owned by the pod named
// spark.kubernetes.driver.pod.name.
func RunDriverPod(ctx context.Context, cfg cluster.SubmitConfig) error {
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Conf == nil {
		cfg.Conf = actor.NewConf()
	}
	if _, ok := cluster.LookupApp(cfg.Class); !ok {
		return &cluster.UnknownAppError{Name: cfg.Class}
	}
	cfg.Conf.Set(KeySubmitInDriver, "true")
	return runDriver(ctx, cfg, true)
}

// runDriver runs the driver here and the executors in pods.
func runDriver(ctx context.Context, cfg cluster.SubmitConfig, inPod bool) error {
	conf := cfg.Conf
	log := cfg.Logger
	fn, _ := cluster.LookupApp(cfg.Class)
	appID := conf.Get(cluster.KeyAppID, "")
	if appID == "" {
		appID = NewAppID()
		conf.Set(cluster.KeyAppID, appID)
	}
	kcfg, err := parseConfig(conf, appID)
	if err != nil {
		return err
	}
	client, err := newAPIClient(conf, apiClientOptions{Server: cfg.Master.APIServer, InDriverPod: inPod})
	if err != nil {
		return err
	}
	log.Info().Str("server", client.Server).Str("credential", client.Credential).Msg("Kubernetes API client")
	if err := client.CheckAccess(ctx, kcfg.Namespace); err != nil {
		return err
	}
	// The driver pod (cluster mode, or client mode with
	// spark.kubernetes.driver.pod.name, as Spark) owns the executor pods.
	var owner *metav1.OwnerReference
	name := conf.Get(KeyDriverPodName, "")
	if inPod && name == "" {
		return badConf(KeyDriverPodName, "", "a driver pod needs its own name")
	}
	if name != "" {
		gctx, cancel := context.WithTimeout(ctx, client.Timeout)
		pod, err := client.CoreV1().Pods(kcfg.Namespace).Get(gctx, name, metav1.GetOptions{})
		cancel()
		if err != nil {
			return fmt.Errorf("driver pod %s:%s (%s): %w", kcfg.Namespace, name, KeyDriverPodName,
				client.apiError(err, "get", "pods/"+name, kcfg.Namespace))
		}
		owner = ownerReferenceTo(pod)
	}
	auth, err := setupDriverAuth(ctx, conf, kcfg, client, owner)
	if err != nil {
		return err
	}
	defer func() {
		if err := auth.cleanup(client, kcfg.Namespace); err != nil {
			log.Warn().Err(err).Msg("deleting the application's secret")
		}
	}()
	host := conf.Get("spark.driver.host", "")
	if host == "" {
		if ip := os.Getenv("SPARK_DRIVER_POD_IP"); inPod && ip != "" {
			host = ip
		} else {
			host = localHostFor(client.Server)
		}
	}
	port := 0
	if p, ok := conf.Lookup("spark.driver.port"); ok {
		if port, err = strconv.Atoi(p); err != nil || port < 0 || port > 65535 {
			return badConf("spark.driver.port", p, "must be a port number")
		}
	}
	nw := cluster.TCPNetwork{BindHost: conf.Get("spark.driver.bindAddress", host), AdvertiseHost: host, Logger: &log}

	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	var outMu sync.Mutex
	report := func(line string) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintln(cfg.Stderr, line)
	}
	var (
		env   *actor.Env
		alloc *allocator
		drv   *endpoints.Driver
		ui    *webui.Server
	)
	allocDone := make(chan struct{})
	start := func(sctx context.Context) (*endpoints.Driver, error) {
		var err error
		env, err = nw.Listen("sparkDriver", conf, port)
		if err != nil {
			return nil, err
		}
		conf.Set("spark.driver.host", env.Address().Host)
		conf.Set("spark.driver.port", strconv.Itoa(env.Address().Port))
		var d *endpoints.Driver
		alloc = newAllocator(kcfg, client, allocatorOptions{Owner: owner, Logger: log, Report: report,
			OnLost: func(id, reason string) {
				if d != nil {
					_ = d.RemoveExecutor(id, reason)
				}
			}})
		d, err = endpoints.NewDriver(env, endpoints.WithLogger(log), endpoints.WithClusterManager(alloc))
		if err != nil {
			return nil, err
		}
		drv = d
		// The driver's UI is the application's tracking URL, as on the
		// other masters; a UI that cannot start never fails the job.
		app := webui.AppInfo{ID: appID, Name: conf.Get(cluster.KeyAppName, appID), User: os.Getenv("USER"), Start: time.Now()}
		if ui, err = webui.StartDriverUI(d, app, nw.BindHost, host, log); err != nil {
			log.Warn().Err(err).Msg("the Spark UI could not start; the application runs without it")
		} else if ui != nil {
			report("tracking URL: " + ui.URL())
		}
		alloc.opts.DriverURL = d.URL()
		if err := alloc.Start(sctx); err != nil {
			return nil, err
		}
		go func() {
			defer close(allocDone)
			select {
			case err := <-alloc.Failed():
				cancelApp(err)
			case <-appCtx.Done():
			}
		}()
		report(fmt.Sprintf("Application %s: driver at %s, requesting %d executor pods in namespace %s (label %s)",
			appID, d.URL(), kcfg.NumExecutors, kcfg.Namespace, ExecutorSelector(appID)))
		up := waitBackendReady(sctx, appCtx, d, conf, kcfg.NumExecutors)
		if err := context.Cause(appCtx); err != nil && appCtx.Err() != nil {
			return nil, err
		}
		report(fmt.Sprintf("Executors registered: %d of %d", up, kcfg.NumExecutors))
		return d, nil
	}
	sc := cluster.NewAppContext(appID, conf, log, cfg.Stdout, start)
	done := make(chan error, 1)
	runUserApp(appCtx, fn, sc, cfg.Args, done)
	appErr := <-done
	if cause := context.Cause(appCtx); cause != nil && appCtx.Err() != nil && ctx.Err() == nil {
		if appErr == nil || !strings.Contains(appErr.Error(), cause.Error()) {
			appErr = fmt.Errorf("%w (application: %v)", cause, appErr)
		}
	}
	if ui != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = ui.Shutdown(sctx)
		cancel()
	}
	if drv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := drv.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("stopping the driver")
		}
		cancel()
	}
	if alloc != nil {
		cancelApp(nil)
		<-allocDone
		sctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if err := alloc.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("deleting the executor pods")
		}
		cancel()
	}
	if env != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = env.Shutdown(sctx)
		cancel()
	}
	return appErr
}

// waitBackendReady waits until spark.scheduler.minRegisteredResourcesRatio
// (0.8) of the executors registered, within
// spark.scheduler.maxRegisteredResourcesWaitingTime (30s), or until appCtx
// ends; it returns how many registered.
func waitBackendReady(ctx, appCtx context.Context, d *endpoints.Driver, conf *actor.Conf, expected int) int {
	ratio := 0.8
	if v, ok := conf.Lookup(cluster.KeyMinRegisteredRatio); ok {
		if r, err := strconv.ParseFloat(v, 64); err == nil {
			ratio = r
		}
	}
	wait, err := conf.GetDuration(cluster.KeyMaxRegisteredWait, "30s", time.Millisecond)
	if err != nil {
		wait = 30 * time.Second
	}
	n := int(float64(expected)*min(1, ratio) + 0.999999)
	if n > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		stop := context.AfterFunc(appCtx, cancel)
		_ = d.WaitForExecutors(wctx, n)
		stop()
		cancel()
	}
	return len(d.Executors())
}

// runUserApp runs fn labelled "Driver" and sends its result (a panic
// becomes an error) to done.
func runUserApp(ctx context.Context, fn cluster.AppFunc, sc *cluster.AppContext, args []string, done chan<- error) {
	var err error
	pprof.Do(ctx, pprof.Labels("thread", cluster.DriverGoroutineLabel), func(ctx context.Context) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		err = fn(ctx, sc, args)
	})
	done <- err
}

// localHostFor returns this machine's address on the route to the API
// server (so that pods can reach the driver), or 127.0.0.1 for a server on
// loopback.
func localHostFor(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return "127.0.0.1"
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return "127.0.0.1"
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	conn, err := net.Dial("udp", net.JoinHostPort(host, port))
	if err != nil {
		return "127.0.0.1"
	}
	defer conn.Close()
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		return ua.IP.String()
	}
	return "127.0.0.1"
}
