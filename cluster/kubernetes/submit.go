package kubernetes

// submit.go runs an application with its driver in this process and its
// executors in pods (client mode, and the driver pod of cluster mode):
// Spark's KubernetesClusterSchedulerBackend.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/driverrun"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
	corev1 "k8s.io/api/core/v1"
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
//
// The pods run the image's program: sparkrpc for the applications compiled
// into it; for a program of one's own (cfg.Program), the program of that
// file name, which the user's image holds (spark.sparkrpc.kubernetes.executable
// says otherwise).
func (Manager) Submit(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc) error {
	if cfg.Program != "" {
		cfg.Conf.SetIfMissing(kubeconf.KeyExecutable, filepath.Base(cfg.Program))
	}
	files, err := podFiles(cfg.Files, cluster.DeployMode(cfg.Conf) == "cluster")
	if err != nil {
		return err
	}
	cfg.Files = files
	if cluster.DeployMode(cfg.Conf) == "cluster" {
		if len(files) > 0 {
			cfg.Conf.Set(cluster.KeyFiles, strings.Join(files, ","))
		}
		return submitCluster(ctx, cfg)
	}
	return runDriver(ctx, cfg, fn, false)
}

// podFiles returns the paths of --files for the driver, which serves them
// to the executor pods: local paths, or local:///PATH for a file the
// driver's image holds, as Spark's; in cluster mode only the latter, since
// the driver pod cannot read this machine's files (Spark would upload them
// to spark.kubernetes.file.upload.path, which sparkrpc does not support).
func podFiles(files []string, clusterMode bool) ([]string, error) {
	out := make([]string, 0, len(files))
	for _, f := range files {
		p, inImage := strings.CutPrefix(f, "local://")
		if clusterMode && !inImage {
			return nil, kubeconf.Invalid("--files", f, "in cluster mode the driver pod reads the files from its image: give local:///PATH "+
				"(uploading this machine's files, Spark's spark.kubernetes.file.upload.path, is not supported)")
		}
		out = append(out, p)
	}
	return out, nil
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
	cfg.Conf.Set(kubeconf.KeySubmitInDriver, "true")
	cfg.Files = cluster.SplitList(cfg.Conf.Get(cluster.KeyFiles, ""))
	return runDriver(ctx, cfg, fn, true)
}

// runDriver runs the driver here and the executors in pods.
func runDriver(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc, inPod bool) error {
	conf := cfg.Conf
	log := cfg.Logger
	appID := conf.Get(cluster.KeyAppID, "")
	if appID == "" {
		appID = kubeconf.NewAppID()
		conf.Set(cluster.KeyAppID, appID)
	}
	kcfg, err := parseConf(conf, appID, !inPod)
	if err != nil {
		return err
	}
	client, err := kubeclient.New(conf, kubeclient.Options{Server: cfg.Master.APIServer, InDriverPod: inPod})
	if err != nil {
		return err
	}
	log.Info().Str("server", client.Server).Str("credential", client.Credential).Msg("Kubernetes API client")
	if err := client.CheckAccess(ctx, kcfg.Namespace); err != nil {
		return err
	}
	if !inPod {
		if err := checkSubmission(ctx, cfg, client, kcfg, nil); err != nil {
			return err
		}
	}
	// The driver pod (cluster mode, or client mode with
	// spark.kubernetes.driver.pod.name, as Spark) owns the executor pods.
	var owner *metav1.OwnerReference
	name := conf.Get(kubeconf.KeyDriverPodName, "")
	if inPod && name == "" {
		return kubeconf.Invalid(kubeconf.KeyDriverPodName, "", "a driver pod needs its own name")
	}
	if name != "" {
		gctx, cancel := context.WithTimeout(ctx, client.Timeout)
		pod, err := client.CoreV1().Pods(kcfg.Namespace).Get(gctx, name, metav1.GetOptions{})
		cancel()
		if err != nil {
			return fmt.Errorf("driver pod %s:%s (%s): %w", kcfg.Namespace, name, kubeconf.KeyDriverPodName,
				client.APIError(err, "get", "pods/"+name, kcfg.Namespace))
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
	bind := ""
	if host == "" {
		if ip := os.Getenv("SPARK_DRIVER_POD_IP"); inPod && ip != "" {
			h, why, err := driverPodHost(ctx, kcfg, conf.Get(kubeconf.KeyDriverServiceHost, "auto"), name, ip)
			if err != nil {
				return err
			}
			log.Info().Str("host", h).Str("why", why).Msg("the driver's host for its executors")
			host, bind = h, ip
		} else {
			host = localHostFor(client.Server)
		}
	}
	port := 0
	if p, ok := conf.Lookup("spark.driver.port"); ok {
		if port, err = strconv.Atoi(p); err != nil || port < 0 || port > 65535 {
			return kubeconf.Invalid("spark.driver.port", p, "must be a port number")
		}
	}
	nw := cluster.TCPNetwork{BindHost: conf.Get("spark.driver.bindAddress", cmp.Or(bind, host)), AdvertiseHost: host, Logger: &log}

	b := &podBackend{kcfg: kcfg, client: client, owner: owner, appID: appID, log: log}
	return driverrun.Run(ctx, driverrun.Spec{AppID: appID, Conf: conf, Network: nw, Port: port, Logger: log,
		Stdout: cfg.Stdout, Status: cfg.Stderr, ShowTrackingURL: true, Fn: fn, Args: cfg.Args, Files: cfg.Files, Backend: b})
}

// checkSubmission makes, unless kubeconf.KeySubmissionDryRun is false, the
// checks of a submission before anything is created: in cluster mode
// (driver, the driver pod, not nil) the review of its service account's
// access (access.go), then the dry run of the pods (dryrun.go). What it
// could not check is written to cfg.Stderr.
func checkSubmission(ctx context.Context, cfg cluster.SubmitConfig, client *kubeclient.Client, kcfg *kubeconf.Config, driver *corev1.Pod) error {
	on, err := cfg.Conf.GetBool(kubeconf.KeySubmissionDryRun, true)
	if err != nil {
		return kubeconf.WrapInvalid(err)
	}
	if !on {
		return nil
	}
	out := cfg.Stderr
	if out == nil {
		out = io.Discard
	}
	if driver != nil {
		if err := reviewDriverAccess(ctx, client, cfg.Conf, kcfg, out); err != nil {
			return err
		}
	}
	if err := dryRunPods(ctx, client, kcfg, driver, out); err != nil {
		return err
	}
	cfg.Logger.Info().Str("namespace", kcfg.Namespace).Bool("driverPod", driver != nil).
		Msg("dry run: the API server admits the application's pods (" + kubeconf.KeySubmissionDryRun + "=false skips this check)")
	return nil
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

// podBackend is the driver's backend on Kubernetes (Spark's
// KubernetesClusterSchedulerBackend): its executors are pods, which the
// allocator creates, replaces and deletes.
type podBackend struct {
	kcfg   *kubeconf.Config
	client *kubeclient.Client
	owner  *metav1.OwnerReference
	appID  string
	log    zerolog.Logger

	app       *driverrun.App
	appCtx    context.Context
	alloc     *executorpods.Allocator
	driver    atomic.Pointer[endpoints.Driver]
	allocDone chan struct{} // closed when the allocator's watch has returned
	events    *eventPoster  // Events on the driver pod; nil without one
	uiURL     string        // the driver's UI ("": none), set by Launch before the allocator starts
}

// UIOptions makes the driver's UI serve the executor pods' logs
// (driverrun.UIOptioner).
func (b *podBackend) UIOptions() []webui.Option {
	l := executorLogs{client: b.client, namespace: b.kcfg.Namespace, appID: b.appID}
	return []webui.Option{webui.WithExecutorLogs(l.read)}
}

// executorLogURL is executor id's log link: the driver UI's route, "" without a UI.
func (b *podBackend) executorLogURL(id int64) string {
	if b.uiURL == "" {
		return ""
	}
	return b.uiURL + webui.ExecutorLogPath(strconv.FormatInt(id, 10))
}

// Prepare makes the allocator, the driver's cluster manager.
func (b *podBackend) Prepare(ctx context.Context, _ *actor.Env, app *driverrun.App) (endpoints.ClusterManager, error) {
	b.app, b.appCtx = app, ctx
	if b.owner != nil {
		b.events = newEventPoster(b.client, b.kcfg.Namespace, *b.owner, b.log)
	}
	b.alloc = executorpods.NewAllocator(b.kcfg, b.client, executorpods.Options{Owner: b.owner, Logger: b.log, Report: app.Status,
		ExecutorLogURL: b.executorLogURL,
		OnLost: func(id, reason string) {
			b.events.post(corev1.EventTypeWarning, EventExecutorLost, fmt.Sprintf("executor %s lost: %s", id, reason))
			if d := b.driver.Load(); d != nil {
				_ = d.RemoveExecutor(id, reason)
			}
		},
		// A running pod being deleted (a drain, a preemption): its
		// executor finishes its tasks and leaves, as in Spark.
		OnDecommission: func(id, reason string) {
			if d := b.driver.Load(); d != nil {
				d.DecommissionExecutor(id, reason)
			}
		}})
	return b.alloc, nil
}

// Launch starts the allocator for driver d; the application ends if the
// allocator fails.
func (b *podBackend) Launch(sctx context.Context, d *endpoints.Driver, uiURL string) (driverrun.Launch, error) {
	b.driver.Store(d)
	b.uiURL = uiURL
	b.events.post(corev1.EventTypeNormal, EventDriverStarted, fmt.Sprintf("application %s: driver started at %s", b.appID, d.URL()))
	if b.events != nil {
		d.AddListener(endpoints.ListenerFunc(func(ev endpoints.Event) {
			if a, ok := ev.(endpoints.ExecutorAdded); ok {
				b.events.post(corev1.EventTypeNormal, EventExecutorRegistered,
					fmt.Sprintf("executor %s registered from %s with %d cores", a.ExecutorID, a.Host, a.Cores))
			}
		}))
	}
	if err := b.alloc.Start(sctx, d.URL()); err != nil {
		return driverrun.Launch{}, err
	}
	b.allocDone = make(chan struct{})
	go func() {
		defer close(b.allocDone)
		select {
		case err := <-b.alloc.Failed():
			b.app.End(err)
		case <-b.appCtx.Done():
		}
	}()
	b.app.Status(fmt.Sprintf("Application %s: driver at %s, requesting %d executor pods in namespace %s (label %s)",
		b.appID, d.URL(), b.kcfg.NumExecutors, b.kcfg.Namespace, executorpods.Selector(b.appID)))
	b.events.post(corev1.EventTypeNormal, EventExecutorsRequested, fmt.Sprintf("requesting %d executor pods", b.kcfg.NumExecutors))
	return driverrun.Launch{Expected: b.kcfg.NumExecutors}, nil
}

// Finish deletes the executor pods and posts the application's end on the
// driver pod.
func (b *podBackend) Finish(appErr error) error {
	defer b.events.close()
	if appErr != nil {
		b.events.post(corev1.EventTypeWarning, EventApplicationFailed, fmt.Sprintf("application %s failed: %v", b.appID, appErr))
	} else {
		b.events.post(corev1.EventTypeNormal, EventApplicationSucceeded, fmt.Sprintf("application %s succeeded", b.appID))
	}
	if b.allocDone == nil {
		return appErr // the allocator never started: no pod was asked for
	}
	<-b.allocDone
	sctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.alloc.Stop(sctx); err != nil {
		b.log.Warn().Err(err).Msg("deleting the executor pods")
	}
	return appErr
}
