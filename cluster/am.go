package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// AMEndpointName is the name of the application master's endpoint, which
// the driver asks for executors and for the reasons executors were lost.
const AMEndpointName = "YarnAM"

// DriverGoroutineLabel is the pprof label value ("thread"=DriverGoroutineLabel)
// of the goroutine that runs the application as the driver.
const DriverGoroutineLabel = "Driver"

// AMConfig configures an application master.
type AMConfig struct {
	// AppID and ContainerID identify the attempt.
	AppID, ContainerID string
	// ResourceManager is the resource manager's address.
	ResourceManager actor.RpcAddress
	// Class and Args are the application to run as the driver (cluster mode).
	Class string
	Args  []string
	// ClientMode makes the AM only allocate executors for the driver at
	// DriverURL (Spark's ExecutorLauncher).
	ClientMode bool
	DriverURL  string
	// Conf is the application's configuration.
	Conf *actor.Conf
	// Network creates the AM's env (it listens, for the driver's executors
	// and, in client mode, for the driver). Its envs log to Logger unless
	// Network.Logger is set.
	Network Network
	// Stdout receives the application's output (cluster mode).
	Stdout io.Writer
	// Logger is the AM's logger.
	Logger zerolog.Logger
}

// RunApplicationMaster runs an application master until its application
// ends: the whole AM process but os.Exit. It returns nil when the
// application succeeded and an *ExitError with Spark's AM exit code
// otherwise: 13 when the application did not bring up its driver within
// spark.yarn.am.waitTime ("Timed out waiting for SparkContext."), 15 when the
// application is unknown or returned an error, 11 after too many executor
// failures (spark.executor.maxNumFailures), 16 when stopped early.
func RunApplicationMaster(ctx context.Context, cfg AMConfig) error {
	if cfg.Conf == nil {
		cfg.Conf = actor.NewConf()
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Network.Logger == nil {
		log := cfg.Logger
		cfg.Network.Logger = &log
	}
	cfg.Conf.Set(KeyAppID, cfg.AppID)
	am := &appMaster{cfg: cfg, conf: cfg.Conf,
		log: cfg.Logger.With().Str("component", "applicationmaster").Str("app", cfg.AppID).Logger()}
	if err := am.readSettings(); err != nil {
		return &ExitError{Code: ExitUncaughtException, Reason: err.Error()}
	}
	if cfg.ClientMode {
		return am.runExecutorLauncher(ctx)
	}
	return am.runDriver(ctx)
}

type appMaster struct {
	cfg  AMConfig
	conf *actor.Conf
	log  zerolog.Logger

	numExecutors int
	executor     Resource
	waitTime     time.Duration
}

func (am *appMaster) readSettings() error {
	var err error
	if am.numExecutors, err = am.conf.GetInt(KeyNumExecutors, 2); err != nil {
		return err
	}
	mem, err := am.conf.GetSizeAsBytes(KeyExecutorMemory, "1g", 1<<20)
	if err != nil {
		return err
	}
	cores, err := am.conf.GetInt(KeyExecutorCores, 1)
	if err != nil {
		return err
	}
	am.executor = Resource{MemoryMB: mem >> 20, Cores: cores}
	am.waitTime, err = am.conf.GetDuration(KeyAMWaitTime, "100s", time.Millisecond)
	return err
}

// fail logs and returns the exit error.
func (am *appMaster) exit(code int, reason string) error {
	am.log.Error().Int("exitCode", code).Msg(reason)
	return &ExitError{Code: code, Reason: reason}
}

// runDriver is cluster mode: the application runs here as the driver.
func (am *appMaster) runDriver(ctx context.Context) error {
	fn, err := lookupApp(am.cfg.Class)
	if err != nil {
		return am.exit(ExitExceptionUserClass, "User class threw exception: "+err.Error())
	}
	env, err := am.cfg.Network.Listen("sparkDriver", am.conf, 0)
	if err != nil {
		return am.exit(ExitUncaughtException, "Cannot start the driver's env: "+err.Error())
	}
	defer shutdownEnv(env, am.log)
	am.conf.Set("spark.driver.host", env.Address().Host)
	am.conf.Set("spark.driver.port", fmt.Sprint(env.Address().Port))
	ep := &amEndpoint{log: am.log}
	amRef, err := env.RegisterEndpoint(AMEndpointName, ep)
	if err != nil {
		return am.exit(ExitUncaughtException, err.Error())
	}
	rm := env.RemoteRef(am.cfg.ResourceManager, ResourceManagerEndpointName)

	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	prog := &Progress{}
	ready := make(chan *endpoints.Driver, 1)
	registered := make(chan struct{})
	var registerErr atomic.Pointer[error]
	start := func(sctx context.Context) (*endpoints.Driver, error) {
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(am.cfg.Logger),
			endpoints.WithClusterManager(newLossLogger(appCtx, amRef, am.log)))
		if err != nil {
			return nil, err
		}
		ready <- d
		select {
		case <-registered:
			if e := registerErr.Load(); e != nil {
				return nil, *e
			}
		case <-sctx.Done():
			return nil, context.Cause(sctx)
		}
		up := waitBackendReady(sctx, d, am.conf, am.numExecutors, 0.8, am.log)
		am.log.Info().Int("registered", up).Int("requested", am.numExecutors).
			Msgf("Executors registered: %d of %d", up, am.numExecutors)
		return d, nil
	}
	sc := NewAppContext(am.cfg.AppID, am.conf, am.cfg.Logger, am.cfg.Stdout, start)
	sc.am = amRef
	appDone := make(chan error, 1)
	go runUserApp(appCtx, fn, sc, am.cfg.Args, appDone)

	var driver *endpoints.Driver
	wait := time.NewTimer(am.waitTime)
	defer wait.Stop()
	select {
	case driver = <-ready:
	case err := <-appDone:
		if err != nil {
			return am.exit(ExitExceptionUserClass, "User class threw exception: "+err.Error())
		}
		return am.exit(ExitUncaughtException, "User did not initialize spark context!")
	case <-wait.C:
		//lint:ignore ST1005 Spark's ApplicationMaster text, also the final status diagnostics.
		cancelApp(errors.New("Timed out waiting for SparkContext."))
		return am.exit(ExitSCNotInited, "Timed out waiting for SparkContext.")
	case <-ctx.Done():
		return am.exit(ExitEarly, "Shutdown hook called before final status was reported.")
	}
	stopDriver := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := driver.Stop(sctx); err != nil {
			am.log.Warn().Err(err).Msg("stopping the driver")
		}
	}
	defer stopDriver() // a second Stop returns the first result

	_, err = actor.ResultAs[*messages.AmRegisterResponse](rm.Ask(ctx, &messages.AmRegister{AppId: am.cfg.AppID,
		Host: env.Address().Host, DriverUrl: driver.URL(), Am: amRef.Proto()}))
	if err != nil {
		registerErr.Store(&err)
		close(registered)
		cancelApp(err)
		return am.exit(ExitUncaughtException, "Cannot register with the resource manager: "+err.Error())
	}
	am.log.Info().Str("driver", driver.URL()).Msg("registered with the resource manager")
	alloc, err := newAllocator(env, rm, am.cfg.AppID, driver.URL(), am.numExecutors, am.executor, am.conf, am.cfg.Logger)
	if err != nil {
		registerErr.Store(&err)
		close(registered)
		return am.exit(ExitUncaughtException, err.Error())
	}
	alloc.progress = func() (int, int, int) {
		_, total, done, running, _ := prog.Snapshot()
		return total, done, running
	}
	alloc.onLost = func(id, reason string) { _ = driver.RemoveExecutor(id, reason) }
	ep.alloc.Store(alloc)
	allocCtx, stopAlloc := context.WithCancel(ctx)
	allocDone := make(chan bool, 1)
	go func() { allocDone <- alloc.run(allocCtx) }()
	close(registered)

	final, diag, code, unregister := FinalSucceeded, "", ExitSuccess, true
	select {
	case err := <-appDone:
		if err != nil {
			final, diag, code = FinalFailed, "User class threw exception: "+err.Error(), ExitExceptionUserClass
		}
	case err := <-alloc.failed:
		var ee *ExitError
		errors.As(err, &ee)
		final, diag, code = FinalFailed, ee.Reason, ee.Code
		cancelApp(err)
	case <-allocDone:
		cancelApp(errors.New("application killed"))
		final, diag, code, unregister = FinalKilled, "Application killed", ExitEarly, false
		allocDone <- true
	case <-ctx.Done():
		cancelApp(errors.New("application master stopped"))
		final, diag, code = FinalFailed, "Shutdown hook called before final status was reported.", ExitEarly
	}
	stopAlloc()
	<-allocDone
	// Stop the executors before unregistering, so that they end cleanly
	// rather than being killed with the application's containers.
	stopDriver()
	if unregister {
		am.unregister(rm, final, diag)
	}
	if code != ExitSuccess {
		return am.exit(code, diag)
	}
	am.log.Info().Msg("Final app status: SUCCEEDED, exitCode: 0")
	return nil
}

func (am *appMaster) unregister(rm *actor.Ref, final FinalStatus, diag string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	am.log.Info().Str("finalStatus", final.String()).Str("diagnostics", diag).Msg("Unregistering ApplicationMaster")
	if _, err := rm.AskSync(ctx, &messages.AmUnregister{AppId: am.cfg.AppID, FinalStatus: messages.RmFinalStatus(final), Diagnostics: diag}); err != nil {
		am.log.Warn().Err(err).Msg("cannot unregister from the resource manager")
	}
}

// runExecutorLauncher is client mode: the driver runs in the submitting
// process; the AM allocates executors for it until it finishes.
func (am *appMaster) runExecutorLauncher(ctx context.Context) error {
	env, err := am.cfg.Network.Listen("sparkYarnAM", am.conf, 0)
	if err != nil {
		return am.exit(ExitUncaughtException, "Cannot start the AM's env: "+err.Error())
	}
	defer shutdownEnv(env, am.log)
	var driverRef *actor.Ref
	deadline := time.Now().Add(am.waitTime)
	for {
		driverRef, err = env.SetupEndpointRefByURI(ctx, am.cfg.DriverURL)
		if err == nil {
			break
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return am.exit(ExitUncaughtException, "Failed to connect to driver at "+am.cfg.DriverURL+": "+err.Error())
		}
		am.log.Warn().Err(err).Msg("Failed to connect to driver, retrying")
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	ep := &amEndpoint{log: am.log, driverAddr: driverRef.Address(), finished: make(chan *messages.AmDriverFinished, 1)}
	amRef, err := env.RegisterEndpoint(AMEndpointName, ep)
	if err != nil {
		return am.exit(ExitUncaughtException, err.Error())
	}
	rm := env.RemoteRef(am.cfg.ResourceManager, ResourceManagerEndpointName)
	_, err = actor.ResultAs[*messages.AmRegisterResponse](rm.Ask(ctx, &messages.AmRegister{AppId: am.cfg.AppID,
		Host: env.Address().Host, DriverUrl: am.cfg.DriverURL, Am: amRef.Proto()}))
	if err != nil {
		return am.exit(ExitUncaughtException, "Cannot register with the resource manager: "+err.Error())
	}
	alloc, err := newAllocator(env, rm, am.cfg.AppID, am.cfg.DriverURL, am.numExecutors, am.executor, am.conf, am.cfg.Logger)
	if err != nil {
		return am.exit(ExitUncaughtException, err.Error())
	}
	ep.alloc.Store(alloc)
	allocCtx, stopAlloc := context.WithCancel(ctx)
	allocDone := make(chan bool, 1)
	go func() { allocDone <- alloc.run(allocCtx) }()

	final, diag, code, unregister := FinalSucceeded, "", ExitSuccess, true
	select {
	case f := <-ep.finished:
		final, diag = FinalStatus(f.GetFinalStatus()), f.GetDiagnostics()
	case err := <-alloc.failed:
		var ee *ExitError
		errors.As(err, &ee)
		final, diag, code = FinalFailed, ee.Reason, ee.Code
	case <-allocDone:
		final, diag, code, unregister = FinalKilled, "Application killed", ExitEarly, false
		allocDone <- true
	case <-ctx.Done():
		final, diag, code = FinalFailed, "Shutdown hook called before final status was reported.", ExitEarly
	}
	stopAlloc()
	<-allocDone
	if unregister {
		am.unregister(rm, final, diag)
	}
	if code != ExitSuccess {
		return am.exit(code, diag)
	}
	return nil
}

// runUserApp runs fn on the calling goroutine, labelled "Driver", and
// sends its result (a panic becomes an error) to done.
func runUserApp(ctx context.Context, fn AppFunc, sc *AppContext, args []string, done chan<- error) {
	var err error
	pprof.Do(ctx, pprof.Labels("thread", DriverGoroutineLabel), func(ctx context.Context) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		err = fn(ctx, sc, args)
	})
	done <- err
}

// waitBackendReady waits until ratio of the expected executors registered,
// or spark.scheduler.maxRegisteredResourcesWaitingTime (30s) passed. It
// returns how many executors are then registered and ready for tasks.
func waitBackendReady(ctx context.Context, d *endpoints.Driver, conf *actor.Conf, expected int, defRatio float64, log zerolog.Logger) int {
	ready := func() int {
		n := 0
		for _, ex := range d.Executors() {
			if ex.Ready {
				n++
			}
		}
		return n
	}
	ratio := defRatio
	if v, ok := conf.Lookup(KeyMinRegisteredRatio); ok {
		if _, err := fmt.Sscanf(v, "%g", &ratio); err != nil {
			log.Warn().Str("value", v).Msg("invalid " + KeyMinRegisteredRatio)
		}
	}
	wait, err := conf.GetDuration(KeyMaxRegisteredWait, "30s", time.Millisecond)
	if err != nil {
		wait = 30 * time.Second
	}
	n := int(float64(expected)*min(1, ratio) + 0.999999)
	if n <= 0 {
		return ready()
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := d.WaitForExecutors(wctx, n); err != nil {
		log.Info().Err(err).Msg("SchedulerBackend is ready for scheduling after waiting maxRegisteredResourcesWaitingTime")
	}
	return ready()
}

func shutdownEnv(env *actor.Env, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil {
		log.Debug().Err(err).Msg("env shutdown")
	}
}

// lossLogger is the driver's link to the AM, its endpoints.ClusterManager
// (Spark's YarnSchedulerBackend): it asks the AM's endpoint for executors,
// to kill them (and replace them), and why they were lost; told that an
// executor was lost, it asks the AM why (GetExecutorLossReason) and logs
// it. Until the AM's reference is known its calls fail with
// ErrNoClusterManager.
type lossLogger struct {
	ctx context.Context
	am  atomic.Pointer[actor.Ref]
	log zerolog.Logger
}

func newLossLogger(ctx context.Context, am *actor.Ref, log zerolog.Logger) *lossLogger {
	l := &lossLogger{ctx: ctx, log: log}
	if am != nil {
		l.am.Store(am)
	}
	return l
}

func (l *lossLogger) amRef() (*actor.Ref, error) {
	am := l.am.Load()
	if am == nil {
		return nil, ErrNoClusterManager
	}
	return am, nil
}

// RequestTotalExecutors implements endpoints.ClusterManager.
func (l *lossLogger) RequestTotalExecutors(ctx context.Context, total int) error {
	am, err := l.amRef()
	if err != nil {
		return err
	}
	_, err = actor.AskAs[*messages.AmBoolResponse](ctx, am, &messages.AmRequestExecutors{Total: int32(total)})
	return err
}

// KillExecutors implements endpoints.ClusterManager: the AM releases the
// executors' containers and lowers its target.
func (l *lossLogger) KillExecutors(ctx context.Context, ids []string) error {
	am, err := l.amRef()
	if err != nil {
		return err
	}
	_, err = actor.AskAs[*messages.AmBoolResponse](ctx, am, &messages.AmKillExecutors{ExecutorIds: ids})
	return err
}

// KillAndReplaceExecutors implements endpoints.ClusterManager: the AM
// releases the executors' containers (their node managers stop the whole
// process group) and starts as many executors in their place.
func (l *lossLogger) KillAndReplaceExecutors(ctx context.Context, ids []string) error {
	am, err := l.amRef()
	if err != nil {
		return err
	}
	_, err = actor.AskAs[*messages.AmBoolResponse](ctx, am, &messages.AmKillExecutors{ExecutorIds: ids, Replace: true})
	return err
}

// ExecutorLossReason implements endpoints.ClusterManager: the AM answers
// once the executor's container has completed, with its exit status; for an
// executor it never ran, the reason is empty.
func (l *lossLogger) ExecutorLossReason(ctx context.Context, id string) (string, error) {
	am, err := l.amRef()
	if err != nil {
		return "", err
	}
	r, err := actor.AskAs[*messages.AmExecutorLossReason](ctx, am, &messages.AmGetExecutorLossReason{ExecutorId: id})
	if err != nil || !r.GetKnown() {
		return "", err
	}
	return r.GetMessage(), nil
}

// ExecutorLost implements endpoints.ExecutorAllocator.
func (l *lossLogger) ExecutorLost(id, reason string) {
	am := l.am.Load()
	if am == nil {
		l.log.Info().Str("executor", id).Str("reason", reason).Msg("executor lost")
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(l.ctx, 30*time.Second)
		defer cancel()
		r, err := actor.AskAs[*messages.AmExecutorLossReason](ctx, am, &messages.AmGetExecutorLossReason{ExecutorId: id})
		if err != nil || !r.GetKnown() {
			l.log.Info().Str("executor", id).Str("reason", reason).Msg("executor lost")
			return
		}
		ev := l.log.Info() // a clean exit or the cluster's doing
		if r.GetExitCausedByApp() {
			ev = l.log.Warn()
		}
		ev.Str("executor", id).Int32("exitStatus", r.GetExitStatus()).Bool("exitCausedByApp", r.GetExitCausedByApp()).
			Msgf("Executor %s lost: %s", id, r.GetMessage())
	}()
}

// amEndpoint is the AM's endpoint (Spark's AMEndpoint).
type amEndpoint struct {
	log        zerolog.Logger
	alloc      atomic.Pointer[allocator]
	driverAddr actor.RpcAddress
	finished   chan *messages.AmDriverFinished
}

func (e *amEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	switch m := msg.(type) {
	case *messages.AmDriverFinished:
		if e.finished != nil {
			select {
			case e.finished <- m:
			default:
			}
		}
		return nil
	}
	return actor.ErrUnsupportedMessage
}

func (e *amEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	a := e.alloc.Load()
	switch m := msg.(type) {
	case *messages.AmRequestExecutors:
		if a == nil {
			return errors.New("the application master has not registered yet")
		}
		a.requestTotal(int(m.GetTotal()))
		ctx.Reply(&messages.AmBoolResponse{Ok: true})
	case *messages.AmKillExecutors:
		if a == nil {
			return errors.New("the application master has not registered yet")
		}
		a.kill(m.GetExecutorIds(), m.GetReplace())
		ctx.Reply(&messages.AmBoolResponse{Ok: true})
	case *messages.AmGetExecutorLossReason:
		if a == nil {
			ctx.Reply(&messages.AmExecutorLossReason{ExecutorId: m.GetExecutorId()})
			return nil
		}
		id := m.GetExecutorId()
		a.lossReason(id, func(r lossReason, known bool) {
			ctx.Reply(&messages.AmExecutorLossReason{ExecutorId: id, Known: known, ExitStatus: r.exitStatus,
				Message: r.message, ExitCausedByApp: r.causedByApp})
		})
	case *messages.AmDriverFinished:
		_ = e.Receive(ctx.Context, m)
		ctx.Reply(&messages.AmBoolResponse{Ok: true})
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

// OnDisconnected ends a client-mode AM when its driver goes away.
func (e *amEndpoint) OnDisconnected(ctx *actor.Context, addr actor.RpcAddress) error {
	if e.finished != nil && addr == e.driverAddr {
		e.log.Info().Str("driver", addr.String()).Msg("Driver terminated or disconnected! Shutting down.")
		select {
		case e.finished <- &messages.AmDriverFinished{FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED,
			Diagnostics: "Driver " + addr.String() + " disconnected"}:
		default:
		}
	}
	return nil
}
