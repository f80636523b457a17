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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/driverrun"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Manager is the cluster manager of k8s:// masters (Spark's
// KubernetesClusterManager): in client mode the driver runs in the
// submitting process and its executors in pods; in cluster mode a driver pod
// runs it, and Submit follows that pod.
type Manager struct{}

// Accepts reports whether m is a k8s:// master.
func (Manager) Accepts(m cluster.Master) bool { return m.Kind == cluster.MasterKubernetes }

// Submit runs fn on the Kubernetes master cfg.Master and waits for it (see
// cluster.Submit).
func (Manager) Submit(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc) error {
	if cluster.DeployMode(cfg.Conf) == "cluster" {
		return submitCluster(ctx, cfg)
	}
	return runDriver(ctx, cfg, fn, false)
}

// Submit runs the application cfg describes on the Kubernetes master
// cfg.Master: cluster.Submit with Manager alone. It returns nil only when
// the application succeeded.
func Submit(ctx context.Context, cfg cluster.SubmitConfig) error {
	return cluster.Submit(ctx, cfg, Manager{})
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
	fn, err := cluster.FindApp(cfg.Class)
	if err != nil {
		return err
	}
	cfg.Conf.Set(KeySubmitInDriver, "true")
	return runDriver(ctx, cfg, fn, true)
}

// runDriver runs the driver here and the executors in pods.
func runDriver(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc, inPod bool) error {
	conf := cfg.Conf
	log := cfg.Logger
	appID := conf.Get(cluster.KeyAppID, "")
	if appID == "" {
		appID = NewAppID()
		conf.Set(cluster.KeyAppID, appID)
	}
	kcfg, err := ParseConfig(conf, appID)
	if err != nil {
		return err
	}
	client, err := NewClient(conf, ClientOptions{Server: cfg.Master.APIServer, InDriverPod: inPod})
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
		alloc *Allocator
		drv   *endpoints.Driver
		ui    *webui.Server
	)
	allocDone := make(chan struct{})
	start := func(sctx context.Context) (cluster.Started, error) {
		var err error
		env, err = nw.Listen("sparkDriver", conf, port)
		if err != nil {
			return cluster.Started{}, err
		}
		conf.Set("spark.driver.host", env.Address().Host)
		conf.Set("spark.driver.port", strconv.Itoa(env.Address().Port))
		var d *endpoints.Driver
		alloc = NewAllocator(kcfg, client, AllocatorOptions{Owner: owner, Logger: log, Report: report,
			OnLost: func(id, reason string) {
				if d != nil {
					_ = d.RemoveExecutor(id, reason)
				}
			}})
		d, err = endpoints.NewDriver(env, endpoints.WithLogger(log), endpoints.WithClusterManager(alloc))
		if err != nil {
			return cluster.Started{}, err
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
			return cluster.Started{}, err
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
		// The wait also ends when the application does (the allocator failed).
		wctx, cancelWait := context.WithCancel(sctx)
		stopWait := context.AfterFunc(appCtx, cancelWait)
		up := driverrun.WaitBackendReady(wctx, d, conf, kcfg.NumExecutors, log)
		stopWait()
		cancelWait()
		if err := context.Cause(appCtx); err != nil && appCtx.Err() != nil {
			return cluster.Started{}, err
		}
		report(fmt.Sprintf("Executors registered: %d of %d", up, kcfg.NumExecutors))
		return cluster.Started{Driver: d}, nil
	}
	sc := cluster.NewAppContext(appID, conf, log, cfg.Stdout, start)
	done := make(chan error, 1)
	driverrun.RunUserApp(appCtx, fn, sc, cfg.Args, done)
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
