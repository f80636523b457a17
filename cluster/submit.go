package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Configuration keys of the embedded local cluster (not Spark's).
const (
	// KeyLocalClusterDir keeps the local cluster's folder (node logs,
	// staging) at this path instead of a temporary folder removed at exit.
	KeyLocalClusterDir = "spark.sparkrpc.localCluster.dir"
	// KeyNodeExpiry is the embedded resource manager's node expiry.
	KeyNodeExpiry = "spark.sparkrpc.rm.nodeExpiry"
	// KeySubmitWorkingDir is the submitting command's working folder, which
	// applications resolve relative file arguments against.
	KeySubmitWorkingDir = "spark.sparkrpc.submit.workingDir"
)

// SubmitConfig is what Submit runs: spark-submit's options, with
// everything but the master, the application and its arguments in Conf
// (spark.submit.deployMode, spark.app.name, spark.yarn.queue,
// spark.driver.memory, spark.executor.memory, spark.executor.cores,
// spark.executor.instances, ...).
type SubmitConfig struct {
	Master Master
	// Class is the registered application name (--class).
	Class string
	Args  []string
	Conf  *actor.Conf
	// Stdout receives the application's output in local and client mode;
	// Stderr the submission's progress (state changes, the task progress bar).
	Stdout, Stderr io.Writer
	// Logger is the logger of everything that runs in this process.
	Logger zerolog.Logger
	// Executable is what containers of an embedded cluster run (default
	// os.Executable()).
	Executable string
	// OnSubmitted, when set, is called with the handle once the application
	// is submitted to a resource manager.
	OnSubmitted func(h *AppHandle)
}

// Submit runs an application on cfg.Master and waits for it to end (unless
// spark.yarn.submit.waitAppCompletion is false in cluster mode). It returns
// nil only when the application succeeded; otherwise the application's own
// error (local and client mode) or an *AppFailedError. On local-cluster it
// refuses at once (with an error matching ErrResourceTooLarge) an AM or an
// executor larger than a node, as such an application could never run.
func Submit(ctx context.Context, cfg SubmitConfig) error {
	if cfg.Conf == nil {
		cfg.Conf = actor.NewConf()
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	fn, err := lookupApp(cfg.Class)
	if err != nil {
		return err
	}
	conf := cfg.Conf
	conf.SetIfMissing(KeyAppName, cfg.Class)
	conf.Set(KeyMaster, cfg.Master.String())
	if wd, err := os.Getwd(); err == nil {
		conf.SetIfMissing(KeySubmitWorkingDir, wd)
	}
	mode := conf.Get(KeyDeployMode, "client")
	if mode != "client" && mode != "cluster" {
		return fmt.Errorf("%w: deploy mode must be client or cluster, not %q", ErrInvalidState, mode)
	}
	switch cfg.Master.Kind {
	case MasterLocal:
		if mode == "cluster" {
			return fmt.Errorf("%w: cluster deploy mode is not compatible with master %q", ErrInvalidMaster, cfg.Master.String())
		}
		return runLocal(ctx, cfg, fn)
	case MasterLocalCluster:
		m := cfg.Master
		conf.SetIfMissing(KeyDriverMemory, fmt.Sprintf("%dm", min(1024, m.WorkerMemoryMB)))
		conf.SetIfMissing(KeyExecutorMemory, fmt.Sprintf("%dm", min(1024, m.WorkerMemoryMB)))
		conf.SetIfMissing(KeyAMMemory, fmt.Sprintf("%dm", min(512, m.WorkerMemoryMB)))
		// As in Spark: each of the W workers runs one executor with its C cores.
		conf.SetIfMissing(KeyExecutorCores, strconv.Itoa(m.WorkerCores))
		n, err := executorsThatFit(conf, m, mode)
		if err != nil {
			return err
		}
		conf.SetIfMissing(KeyNumExecutors, strconv.Itoa(max(1, n)))
		want, err := conf.GetInt(KeyNumExecutors, n)
		if err != nil {
			return err
		}
		if n == 0 && want > 0 {
			return noExecutorFits(conf, m, mode)
		}
		if want > n {
			warnFewResources(cfg.Stderr, conf, want, n, m.String())
		}
		expiry, err := conf.GetDuration(KeyNodeExpiry, "60s", time.Millisecond)
		if err != nil {
			return err
		}
		amMem, amCores, err := amResource(conf, mode)
		if err != nil {
			return err
		}
		lc, err := StartLocalCluster(ctx, LocalClusterConfig{Workers: m.Workers, WorkerCores: m.WorkerCores, WorkerMemoryMB: m.WorkerMemoryMB,
			AMNode: Resource{MemoryMB: amMem, Cores: amCores},
			Dir:    conf.Get(KeyLocalClusterDir, ""), Executable: cfg.Executable, NodeExpiry: expiry, Logger: cfg.Logger})
		if err != nil {
			return wrapf(err, "cannot start the local cluster")
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := lc.Shutdown(sctx); err != nil {
				cfg.Logger.Warn().Err(err).Msg("local cluster shutdown")
			}
		}()
		conf.SetIfMissing(KeyReportInterval, "200ms")
		if mode == "cluster" && !conf.Contains(KeyWaitAppCompletion) {
			// The embedded cluster lives only as long as this command.
			conf.Set(KeyWaitAppCompletion, "true")
		}
		return runOnRM(ctx, cfg, fn, lc.Address(), mode, true)
	case MasterRM:
		return runOnRM(ctx, cfg, fn, cfg.Master.Address, mode, false)
	}
	return fmt.Errorf("%w: %q", ErrInvalidMaster, cfg.Master.String())
}

// runLocal is local[N]: a driver env on loopback and one executor with N
// cores in a client-mode env, both in this process.
func runLocal(ctx context.Context, cfg SubmitConfig, fn AppFunc) error {
	appID := fmt.Sprintf("local-%d", time.Now().UnixMilli())
	conf := cfg.Conf
	conf.Set(KeyAppID, appID)
	log := cfg.Logger
	net := Network{BindHost: "127.0.0.1", Logger: &log}
	env, err := net.Listen("sparkDriver", conf, 0)
	if err != nil {
		return err
	}
	defer shutdownEnv(env, log)
	prog := &Progress{}
	var execDone chan error
	var stopExec context.CancelFunc
	start := func(sctx context.Context) (*endpoints.Driver, error) {
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(log))
		if err != nil {
			return nil, err
		}
		var ectx context.Context
		ectx, stopExec = context.WithCancel(context.Background())
		execDone = make(chan error, 1)
		go func() {
			execDone <- endpoints.RunExecutor(ectx, endpoints.ExecutorConfig{DriverURL: d.URL(), ExecutorID: "driver",
				Hostname: "localhost", AppID: appID, Cores: cfg.Master.Cores},
				endpoints.WithEnvFactory(net.ExecutorEnvFactory()), endpoints.WithLogger(log))
		}()
		if err := d.WaitForExecutors(sctx, 1); err != nil {
			return nil, err
		}
		return d, nil
	}
	waitTime, err := conf.GetDuration(KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	started, start := noticeStart(start)
	bar := startConsoleProgress(cfg.Stderr, progressInterval(conf), prog.Snapshot)
	sc := NewAppContext(appID, conf, log, bar.Above(cfg.Stdout), start)
	appErr := runApp(ctx, fn, sc, cfg.Args, started, waitTime)
	bar.Stop()
	if d := sc.driver; d != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("stopping the driver")
		}
		cancel()
	}
	if stopExec != nil {
		select {
		case <-execDone:
		case <-time.After(10 * time.Second):
			stopExec()
			<-execDone
		}
		stopExec()
	}
	return appErr
}

// quietLogger returns log for an env whose connection failures are all
// reported as errors of the calls that needed them: only errors, unless
// log is at debug level or below.
func quietLogger(log zerolog.Logger) zerolog.Logger {
	if log.GetLevel() > zerolog.DebugLevel {
		return log.Level(max(log.GetLevel(), zerolog.ErrorLevel))
	}
	return log
}

// noticeStart returns start wrapped so that the returned channel closes
// when the application first asks for its driver.
func noticeStart(start func(context.Context) (*endpoints.Driver, error)) (<-chan struct{}, func(context.Context) (*endpoints.Driver, error)) {
	started := make(chan struct{})
	var once sync.Once
	return started, func(ctx context.Context) (*endpoints.Driver, error) {
		once.Do(func() { close(started) })
		return start(ctx)
	}
}

// runApp runs the application in the driver's goroutine and returns its
// error. An application that has not asked for its driver (SparkContext)
// within wait (spark.yarn.am.waitTime) is cancelled and fails as YARN's
// application master fails it: an *ExitError with code ExitSCNotInited.
func runApp(ctx context.Context, fn AppFunc, sc *AppContext, args []string, started <-chan struct{}, wait time.Duration) error {
	appCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go runUserApp(appCtx, fn, sc, args, done)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-started:
		return <-done
	case <-timer.C:
	}
	reason := fmt.Sprintf("SparkContext did not initialize after waiting for %d ms (%s). Please check earlier log output for errors. Failing the application.",
		wait.Milliseconds(), KeyAMWaitTime)
	cancel(errors.New(reason))
	select {
	case <-done:
	case <-time.After(10 * time.Second): // an application that ignores its ctx is left behind
	}
	return &ExitError{Code: ExitSCNotInited, Reason: reason}
}

// executorsThatFit returns how many executors fit on the workers of the
// local cluster m (the application master has a node of its own): the
// default number of executors there. It fails when the AM or an executor is
// larger than a node, as the application could then never run.
func executorsThatFit(conf *actor.Conf, m Master, mode string) (int, error) {
	amMem, amCores, err := amResource(conf, mode)
	if err != nil {
		return 0, err
	}
	exMem, err := memoryMB(conf, KeyExecutorMemory, "1g")
	if err != nil {
		return 0, err
	}
	exCores, err := conf.GetInt(KeyExecutorCores, 1)
	if err != nil {
		return 0, err
	}
	if exCores < 1 {
		return 0, &actor.ConfError{Key: KeyExecutorCores, Value: strconv.Itoa(exCores), Err: errors.New("must be at least 1")}
	}
	node := Resource{MemoryMB: m.WorkerMemoryMB, Cores: m.WorkerCores}
	tooLarge := func(what string, r Resource, memFlag, coresFlag string) error {
		hint := fmt.Sprintf("Please give the nodes of %s more memory (M, in MiB) or lower %s.", m, memFlag)
		if r.MemoryMB <= node.MemoryMB {
			hint = fmt.Sprintf("Please give the nodes of %s more cores (C) or lower %s.", m, coresFlag)
		}
		return &ResourceTooLargeError{What: what, Requested: r, Max: node, hint: hint}
	}
	am, ex := Resource{MemoryMB: amMem, Cores: amCores}, Resource{MemoryMB: exMem, Cores: exCores}
	if !am.Fits(node) {
		if mode == "cluster" {
			return 0, tooLarge("AM", am, "--driver-memory", "--driver-cores")
		}
		return 0, tooLarge("AM", am, KeyAMMemory, KeyAMCores)
	}
	if !ex.Fits(node) {
		return 0, tooLarge("executor", ex, "--executor-memory", "--executor-cores")
	}
	return m.Workers * int(min(m.WorkerMemoryMB/exMem, int64(m.WorkerCores/exCores))), nil
}

// amResource returns the application master's container: the driver's in
// cluster mode, spark.yarn.am.* in client mode.
func amResource(conf *actor.Conf, mode string) (int64, int, error) {
	memKey, memDef, coresKey := KeyAMMemory, "512m", KeyAMCores
	if mode == "cluster" {
		memKey, memDef, coresKey = KeyDriverMemory, "1g", KeyDriverCores
	}
	mem, err := memoryMB(conf, memKey, memDef)
	if err != nil {
		return 0, 0, err
	}
	cores, err := conf.GetInt(coresKey, 1)
	return mem, cores, err
}

// noExecutorFits is the error for a local cluster with no room for an
// executor beside the application master.
func noExecutorFits(conf *actor.Conf, m Master, mode string) error {
	amMem, amCores, _ := amResource(conf, mode)
	exMem, _ := memoryMB(conf, KeyExecutorMemory, "1g")
	exCores, _ := conf.GetInt(KeyExecutorCores, 1)
	return fmt.Errorf("%w: no executor (%d MB, %s) fits on %s beside the application master (%d MB, %s): "+
		"give the master more workers, cores or memory, or lower --executor-memory or --executor-cores", ErrResourceTooLarge,
		exMem, cores(exCores), m, amMem, cores(amCores))
}

// warnFewResources tells the user at once that the cluster where can hold
// only n of the want executors, and when the job proceeds anyway.
func warnFewResources(w io.Writer, conf *actor.Conf, want, n int, where string) {
	fmt.Fprintf(w, "Warning: %d executors asked for, but %s can hold at most %d beside the application master. "+
		"The job proceeds when %s (%s) of them have registered, or after %s (%s).\n", want, where, n,
		KeyMinRegisteredRatio, conf.Get(KeyMinRegisteredRatio, "0.8"), KeyMaxRegisteredWait, conf.Get(KeyMaxRegisteredWait, "30s"))
}

// executorCapacity returns how many executors ex the nodes hold beside one
// application master am, placed where it leaves the most room.
func executorCapacity(nodes []Resource, am, ex Resource) int {
	fit := func(node Resource) int {
		if node.MemoryMB < ex.MemoryMB || node.Cores < ex.Cores || ex.MemoryMB <= 0 || ex.Cores <= 0 {
			return 0
		}
		return int(min(node.MemoryMB/ex.MemoryMB, int64(node.Cores/ex.Cores)))
	}
	best := 0
	for i := range nodes {
		if !am.Fits(nodes[i]) {
			continue
		}
		n := 0
		for j, node := range nodes {
			if j == i {
				node = Resource{MemoryMB: node.MemoryMB - am.MemoryMB, Cores: node.Cores - am.Cores}
			}
			n += fit(node)
		}
		best = max(best, n)
	}
	return best
}

// checkCapacity warns when the resource manager's nodes cannot hold the
// executors asked for (an unreachable resource manager is reported by the
// submission itself).
func checkCapacity(ctx context.Context, w io.Writer, client *Client, conf *actor.Conf, mode string, ex Resource) {
	want, err := conf.GetInt(KeyNumExecutors, 2)
	if err != nil || want <= 0 {
		return
	}
	amMem, amCores, err := amResource(conf, mode)
	if err != nil {
		return
	}
	reports, err := client.Nodes(ctx)
	if err != nil || len(reports) == 0 {
		return
	}
	var nodes []Resource
	for _, r := range reports {
		if r.GetState() == "RUNNING" {
			nodes = append(nodes, resourceFromProto(r.GetCapability()))
		}
	}
	if n := executorCapacity(nodes, Resource{MemoryMB: amMem, Cores: amCores}, ex); n < want {
		warnFewResources(w, conf, want, n, fmt.Sprintf("the cluster's %d nodes", len(nodes)))
	}
}

func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return strconv.Itoa(n) + " cores"
}

func progressInterval(conf *actor.Conf) time.Duration {
	d, err := conf.GetDuration("spark.ui.consoleProgress.update.interval", "200", time.Millisecond)
	if err != nil || d <= 0 {
		return 200 * time.Millisecond
	}
	return d
}

func memoryMB(conf *actor.Conf, key, def string) (int64, error) {
	n, err := conf.GetSizeAsBytes(key, def, 1<<20)
	if err != nil {
		return 0, err
	}
	if n < 1<<20 {
		return 0, &actor.ConfError{Key: key, Value: conf.Get(key, def), Err: errors.New("must be at least 1m")}
	}
	return n >> 20, nil
}

// reportPrinter prints state changes and task progress of a submitted
// application (Spark's Client.monitorApplication output).
type reportPrinter struct {
	w        io.Writer
	tty      bool
	hideLogs bool // the logs are in a folder removed at exit
	noTasks  bool // the driver runs here and draws its own progress bar
	mu       sync.Mutex
	last     time.Time // of the last progress line (not on a terminal)
}

func (p *reportPrinter) StateChanged(r *AppReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 80))
	}
	fmt.Fprintf(p.w, "Application report for %s (state: %s)\n", r.ID, r.State)
	if r.State == StateRunning || r.State.Terminal() {
		c := *r
		if p.hideLogs {
			c.AMLogDir = ""
		}
		fmt.Fprintln(p.w, c.String())
	}
}

func (p *reportPrinter) InfoChanged(r *AppReport) {
	if r.State != StateRunning || r.TasksTotal == 0 || p.noTasks {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	bar := progressBar(0, r.TasksTotal, r.TasksDone, r.TasksRunning, 80)
	if p.tty {
		fmt.Fprintf(p.w, "\r%s", bar)
	} else if time.Since(p.last) >= nonTTYProgressInterval || r.TasksDone == r.TasksTotal {
		p.last = time.Now()
		fmt.Fprintln(p.w, bar)
	}
}

// runOnRM submits to the resource manager at rm: cluster mode submits the
// AM with the application; client mode runs the driver here and submits an
// AM that only allocates executors.
func runOnRM(ctx context.Context, cfg SubmitConfig, fn AppFunc, rm actor.RpcAddress, mode string, embedded bool) error {
	conf := cfg.Conf
	log := cfg.Logger
	driverMem, err := memoryMB(conf, KeyDriverMemory, "1g")
	if err != nil {
		return err
	}
	driverCores, err := conf.GetInt(KeyDriverCores, 1)
	if err != nil {
		return err
	}
	execMem, err := memoryMB(conf, KeyExecutorMemory, "1g")
	if err != nil {
		return err
	}
	execCores, err := conf.GetInt(KeyExecutorCores, 1)
	if err != nil {
		return err
	}
	reportInterval, err := conf.GetDuration(KeyReportInterval, "1s", time.Millisecond)
	if err != nil {
		return err
	}
	host := conf.Get("spark.driver.host", localHostFor(rm))
	net := Network{BindHost: conf.Get("spark.driver.bindAddress", host), AdvertiseHost: host, Logger: &log}
	// Every failure of the submitting env's connection comes back as an
	// error of the call that needed it: its warnings would only come
	// before that error (they are kept at debug level).
	quiet := quietLogger(log)
	cenv, err := Network{Logger: &quiet}.Client("sparkSubmit", conf.Clone())
	if err != nil {
		return err
	}
	defer shutdownEnv(cenv, log)
	client := NewClient(cenv, rm)
	printer := &reportPrinter{w: cfg.Stderr, tty: isTerminal(cfg.Stderr), hideLogs: embedded && !conf.Contains(KeyLocalClusterDir)}
	sub := Submission{Name: conf.Get(KeyAppName, cfg.Class), Queue: conf.Get(KeyQueue, "default"),
		ExecutorResource: Resource{MemoryMB: execMem, Cores: execCores}, ReportInterval: reportInterval}
	if !embedded {
		checkCapacity(ctx, cfg.Stderr, client, conf, mode, sub.ExecutorResource)
	}

	if mode == "cluster" {
		sub.AMResource = Resource{MemoryMB: driverMem, Cores: driverCores}
		sub.AMCommand = append([]string{"sparkrpc", "applicationmaster", "--class", cfg.Class, "--rm", rm.HostPort(), "--"}, cfg.Args...)
		sub.Conf = conf.All()
		h, err := client.Submit(ctx, sub)
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.Stderr, "Submitted application %s\n", h.AppID())
		if cfg.OnSubmitted != nil {
			cfg.OnSubmitted(h)
		}
		wait, err := conf.GetBool(KeyWaitAppCompletion, true)
		if err != nil {
			return err
		}
		if !wait {
			r, err := h.Poll(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(cfg.Stderr, "Application report for %s (state: %s)\n", r.ID, r.State)
			return nil
		}
		h.AddListener(printer)
		r, err := h.Wait(ctx)
		if ctx.Err() != nil {
			if !embedded {
				return fmt.Errorf("%w: application %s keeps running (stop it with submit --master %s --kill %s)",
					err, h.AppID(), cfg.Master, h.AppID())
			}
			kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, kerr := client.Kill(kctx, h.AppID(), "Application killed: the submitting command was interrupted.")
			cancel()
			if kerr == nil {
				err = fmt.Errorf("%w: killed application %s", err, h.AppID())
			}
		}
		if embedded && r != nil {
			printDriverOutput(cfg.Stdout, r)
		}
		return err
	}
	printer.noTasks = true
	return runClientMode(ctx, cfg, fn, client, sub, net, printer)
}

// printDriverOutput copies the driver container's stdout (on this machine,
// for the embedded cluster) to w.
func printDriverOutput(w io.Writer, r *AppReport) {
	_, dir, ok := strings.Cut(r.AMLogDir, ":")
	if !ok {
		return
	}
	if i := strings.Index(dir, "/"); i > 0 {
		dir = dir[i:]
	}
	b, err := os.ReadFile(filepath.Join(dir, "stdout"))
	if err == nil {
		_, _ = w.Write(b)
	}
}

// runClientMode runs the driver in this process; bringing it up submits an
// AM (ExecutorLauncher) that allocates executors for it.
func runClientMode(ctx context.Context, cfg SubmitConfig, fn AppFunc, client *Client, sub Submission, net Network, printer *reportPrinter) error {
	conf := cfg.Conf
	log := cfg.Logger
	amMem, err := memoryMB(conf, KeyAMMemory, "512m")
	if err != nil {
		return err
	}
	amCores, err := conf.GetInt(KeyAMCores, 1)
	if err != nil {
		return err
	}
	numExec, err := conf.GetInt(KeyNumExecutors, 2)
	if err != nil {
		return err
	}
	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	prog := &Progress{}
	losses := newLossLogger(appCtx, nil, log)
	var sc *AppContext
	var (
		env      *actor.Env
		handle   *AppHandle
		amRef    *actor.Ref
		monitor  = make(chan struct{})
		monDone  = make(chan struct{})
		monStart sync.Once
		// The driver runs here, not in the AM: it reports its tasks to
		// the resource manager itself, for the application's report.
		progStop  = make(chan struct{})
		progDone  = make(chan struct{})
		progStart sync.Once
	)
	start := func(sctx context.Context) (*endpoints.Driver, error) {
		var err error
		env, err = net.Listen("sparkDriver", conf, 0)
		if err != nil {
			return nil, err
		}
		conf.Set("spark.driver.host", env.Address().Host)
		conf.Set("spark.driver.port", strconv.Itoa(env.Address().Port))
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(log), endpoints.WithClusterManager(losses))
		if err != nil {
			return nil, err
		}
		sub.AMResource = Resource{MemoryMB: amMem, Cores: amCores}
		sub.AMCommand = []string{"sparkrpc", "applicationmaster", "--client-mode", "--driver-url", d.URL(), "--rm", client.rm.Address().HostPort()}
		sub.UnmanagedDriver = true
		sub.Conf = conf.All()
		h, err := client.Submit(sctx, sub)
		if err != nil {
			return nil, err
		}
		handle = h
		progStart.Do(func() {
			go func() {
				defer close(progDone)
				reportDriverProgress(client, h.AppID(), prog, sub.ReportInterval, progStop)
			}()
		})
		sc.appID = h.AppID()
		conf.Set(KeyAppID, h.AppID())
		fmt.Fprintf(cfg.Stderr, "Submitted application %s\n", h.AppID())
		if cfg.OnSubmitted != nil {
			cfg.OnSubmitted(h)
		}
		h.AddListener(printer)
		r, err := h.WaitFor(sctx, func(r *AppReport) bool { return r.State == StateRunning })
		if err != nil {
			return nil, err
		}
		if r.State != StateRunning {
			return nil, fmt.Errorf("%w: Yarn application has already ended! It might have been killed or unable to launch application master. State %s, diagnostics: %s",
				ErrAppFailed, r.State, r.Diagnostics)
		}
		if r.am != nil {
			if ref, err := client.env.RefFromProto(r.am); err == nil {
				amRef = ref
				sc.am = ref
				losses.am.Store(ref)
			}
		}
		// Monitor the application: if it ends while the driver runs (killed,
		// too many executor failures), stop the application.
		monStart.Do(func() {
			go func() {
				defer close(monDone)
				r, err := h.WaitFor(appCtx, func(*AppReport) bool {
					select {
					case <-monitor:
						return true
					default:
						return false
					}
				})
				if err == nil && r.State.Terminal() {
					cancelApp(fmt.Errorf("%w: YARN application has exited unexpectedly with state %s! Diagnostics: %s", ErrAppFailed, r.State, r.Diagnostics))
				}
			}()
		})
		up := waitBackendReady(sctx, d, conf, numExec, 0.8, log)
		fmt.Fprintf(cfg.Stderr, "Executors registered: %d of %d\n", up, numExec)
		return d, nil
	}
	waitTime, err := conf.GetDuration(KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	started, startFn := noticeStart(start)
	bar := startConsoleProgress(cfg.Stderr, progressInterval(conf), prog.Snapshot)
	sc = NewAppContext("", conf, log, bar.Above(cfg.Stdout), startFn)
	appErr := runApp(appCtx, fn, sc, cfg.Args, started, waitTime)
	bar.Stop()
	close(progStop)
	progStart.Do(func() { close(progDone) })
	<-progDone
	if cause := context.Cause(appCtx); appErr != nil && cause != nil && appCtx.Err() != nil && !strings.Contains(appErr.Error(), cause.Error()) {
		appErr = fmt.Errorf("%w (%v)", cause, appErr)
	}
	close(monitor)
	monStart.Do(func() { close(monDone) })
	<-monDone
	if d := sc.driver; d != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("stopping the driver")
		}
		cancel()
	}
	if handle != nil {
		final, diag := FinalSucceeded, ""
		if appErr != nil {
			final, diag = FinalFailed, "User application failed: "+appErr.Error()
		}
		told := false
		if amRef != nil && ctx.Err() == nil {
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := amRef.AskSync(fctx, &messages.AmDriverFinished{FinalStatus: messages.RmFinalStatus(final), Diagnostics: diag})
			cancel()
			told = err == nil
		}
		if !told {
			// Interrupted, or the AM is unreachable: end the application here.
			why := "Application killed: the driver ended before its application master could be told."
			if ctx.Err() != nil {
				why = "Application killed: the submitting command was interrupted."
			}
			kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, kerr := client.Kill(kctx, handle.AppID(), why)
			cancel()
			if kerr == nil && ctx.Err() != nil && appErr != nil {
				appErr = fmt.Errorf("%w: killed application %s", appErr, handle.AppID())
			}
		}
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _ = handle.WaitFor(wctx, func(r *AppReport) bool { return r.State.Terminal() })
		cancel()
	}
	if env != nil {
		shutdownEnv(env, log)
	}
	return appErr
}

// reportDriverProgress sends the driver's task progress to the resource
// manager every interval while it changes, and once more when stop closes.
func reportDriverProgress(client *Client, appID string, prog *Progress, interval time.Duration, stop <-chan struct{}) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	last := -1
	send := func() {
		_, total, done, running, version := prog.Snapshot()
		if version != last {
			last = version
			_ = client.ReportProgress(appID, total, done, running)
		}
	}
	for {
		select {
		case <-stop:
			send()
			return
		case <-t.C:
			send()
		}
	}
}

// localHostFor returns this machine's address on the route to addr (so
// that processes there can reach back), or 127.0.0.1.
func localHostFor(addr actor.RpcAddress) string {
	host := strings.TrimSuffix(strings.TrimPrefix(addr.Host, "["), "]")
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return "127.0.0.1"
	}
	conn, err := net.Dial("udp", addr.HostPort())
	if err != nil {
		return "127.0.0.1"
	}
	defer conn.Close()
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		return ua.IP.String()
	}
	return "127.0.0.1"
}
