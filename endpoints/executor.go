package endpoints

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// ExecutorConfig is what an executor process is started with (the flags of
// Spark's CoarseGrainedExecutorBackend).
type ExecutorConfig struct {
	// DriverURL is the driver's Driver.URL (required).
	DriverURL string
	// ExecutorID is the executor's id, unique in the application (required).
	ExecutorID string
	// BindAddress is the address the executor binds to; informational for
	// an executor in client mode.
	BindAddress string
	// Hostname is the executor's host as the driver sees it (default
	// BindAddress, else "localhost").
	Hostname string
	// AppID is the application id (spark.app.id).
	AppID string
	// Cores is the number of tasks the executor runs at once (required, > 0).
	Cores int
	// ResourceProfileID is the executor's resource profile (default 0).
	ResourceProfileID int
	// LogURLs and Attributes are passed to the driver as they are.
	LogURLs    map[string]string
	Attributes map[string]string
}

func (c *ExecutorConfig) validate() error {
	var missing []string
	if c.DriverURL == "" {
		missing = append(missing, "DriverURL")
	}
	if c.ExecutorID == "" {
		missing = append(missing, "ExecutorID")
	}
	if c.Cores <= 0 {
		missing = append(missing, "Cores (> 0)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: executor config needs %s", ErrInvalidConfig, strings.Join(missing, ", "))
	}
	if c.Hostname == "" {
		c.Hostname = c.BindAddress
	}
	if c.Hostname == "" {
		c.Hostname = "localhost"
	}
	return nil
}

// driverPropsFetchTries is how many times the config fetcher looks the
// driver up (Spark's SPARK_EXECUTOR_DRIVER_PROPS_FETCHER_MAX_ATTEMPTS).
const driverPropsFetchTries = 3

// RunExecutor runs an executor until it stops: the whole executor process
// but os.Exit. It starts a config-fetcher env, looks the driver up (3
// tries), asks it for the application's configuration
// (RetrieveSparkAppConfig), builds its conf from the driver's properties,
// starts its own env, registers the Executor endpoint — which registers with
// the driver — and waits.
//
// It returns nil for a clean stop (the driver sent StopExecutor, or ctx
// was cancelled) and an *ExitError otherwise: code 1 when the registration
// was refused or the driver went away, ExitCodeHeartbeatFailure when
// heartbeats failed too often.
//
// Cancelling ctx stops the executor gracefully: the driver is told to send
// it no more tasks (ExecutorDecommissioning), the running tasks finish, the
// driver is told it is gone (RemoveExecutor), and RunExecutor returns nil.
func RunExecutor(ctx context.Context, cfg ExecutorConfig, opts ...ExecutorOption) error {
	o := executorOptions{stopTimeout: 10 * time.Second, lookupTries: driverPropsFetchTries}
	for _, opt := range opts {
		opt.applyExecutor(&o)
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	if o.newEnv == nil {
		return ErrNoEnvFactory
	}
	base := zerolog.Nop()
	if o.logger != nil {
		base = *o.logger
	}
	lg := base.With().Str("component", "executor").Str("executor", cfg.ExecutorID).Logger()
	local := o.conf
	if local == nil {
		local = actor.NewConf()
	}
	props, fetcherDone, err := fetchDriverProperties(ctx, cfg, local, o, lg)
	defer func() { <-fetcherDone }()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return &ExitError{Code: 1, Reason: "Cannot fetch the application's configuration from " + cfg.DriverURL, Err: err}
	}
	conf := executorConf(local, props, cfg)
	env, err := o.newEnv("sparkExecutor", conf)
	if err != nil {
		return &ExitError{Code: 1, Reason: "Cannot create the executor's env", Err: err}
	}
	b, err := newExecutorBackend(env, cfg, conf, o, lg)
	if err == nil {
		_, err = env.RegisterEndpoint(ExecutorEndpointName, b)
	}
	if err != nil {
		shutdownEnv(env, o.stopTimeout, lg)
		return &ExitError{Code: 1, Reason: "Cannot start the executor", Err: err}
	}
	select {
	case <-b.finished:
	case <-ctx.Done():
		b.decommission()
		<-b.finished
	case <-env.Terminated():
		b.finish()
	}
	shutdownEnv(env, o.stopTimeout, lg)
	return b.result()
}

func shutdownEnv(env *actor.Env, timeout time.Duration, lg zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil {
		lg.Warn().Err(err).Msg("env shutdown")
	}
}

// fetchDriverProperties is the fetcher step: a client env that asks the
// driver for its properties. The fetcher env shuts down in the background;
// the returned channel is closed once it has.
func fetchDriverProperties(ctx context.Context, cfg ExecutorConfig, local *actor.Conf, o executorOptions, lg zerolog.Logger) (map[string]string, <-chan struct{}, error) {
	done := make(chan struct{})
	fetcher, err := o.newEnv("driverPropsFetcher", local.Clone())
	if err != nil {
		close(done)
		return nil, done, err
	}
	defer func() {
		go func() {
			defer close(done)
			shutdownEnv(fetcher, o.stopTimeout, lg)
		}()
	}()
	var driver *actor.Ref
	for i := range o.lookupTries {
		driver, err = fetcher.SetupEndpointRefByURI(ctx, cfg.DriverURL)
		if err == nil || ctx.Err() != nil || i == o.lookupTries-1 {
			break
		}
		lg.Warn().Err(err).Int("attempt", i+1).Msg("driver lookup failed; retrying")
		t := time.NewTimer(time.Duration(i+1) * 100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	if err != nil {
		return nil, done, err
	}
	res, err := actor.ResultAs[*messages.SparkAppConfig](driver.Ask(ctx, &messages.RetrieveSparkAppConfig{
		ResourceProfileId: int32(cfg.ResourceProfileID)}))
	if err != nil {
		return nil, done, err
	}
	return res.GetSparkProperties(), done, nil
}

// isExecutorStartupConf reports whether the executor's own value of key wins
// over the driver's (Spark's SparkConf.isExecutorStartupConf).
func isExecutorStartupConf(key string) bool {
	return (strings.HasPrefix(key, "spark.auth") && key != "spark.authenticate.secret") ||
		strings.HasPrefix(key, "spark.rpc") || strings.HasPrefix(key, "spark.network") ||
		strings.HasPrefix(key, "spark.ssl") ||
		(strings.HasPrefix(key, "spark.") && strings.HasSuffix(key, ".port")) || key == "spark.port.maxRetries"
}

func executorConf(local *actor.Conf, props map[string]string, cfg ExecutorConfig) *actor.Conf {
	conf := local.Clone()
	for k, v := range props {
		if isExecutorStartupConf(k) {
			conf.SetIfMissing(k, v)
		} else {
			conf.Set(k, v)
		}
	}
	if cfg.AppID != "" {
		conf.Set("spark.app.id", cfg.AppID)
	}
	conf.Set("spark.executor.id", cfg.ExecutorID)
	return conf
}

// executorBackend is the Executor endpoint (Spark's
// CoarseGrainedExecutorBackend): serial, on a loop of its own.
type executorBackend struct {
	env  *actor.Env
	cfg  ExecutorConfig
	log  zerolog.Logger
	opts executorOptions

	hbInterval    time.Duration
	hbMaxFailures int
	maxSize       int

	ctx    context.Context // cancelled in OnStop
	cancel context.CancelFunc

	self     atomic.Pointer[actor.Ref]
	driver   atomic.Pointer[actor.Ref]
	runner   *taskRunner // loop only
	hbStop   chan struct{}
	hbOnce   sync.Once
	stopping atomic.Bool

	mu         sync.Mutex
	notified   *actor.Future // the RemoveExecutor told to the driver on exit
	exitCode   int
	exitReason string
	exitErr    error
	finishOnce sync.Once
	finished   chan struct{}
}

func newExecutorBackend(env *actor.Env, cfg ExecutorConfig, conf *actor.Conf, o executorOptions, lg zerolog.Logger) (*executorBackend, error) {
	interval, err := conf.GetDuration(KeyHeartbeatInterval, "10s", time.Millisecond)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, fmt.Errorf("%w: %s must be positive", ErrInvalidConfig, KeyHeartbeatInterval)
	}
	maxFailures, err := conf.GetInt(KeyHeartbeatMaxFailures, 60)
	if err != nil {
		return nil, err
	}
	maxSize, err := conf.MaxMessageSize()
	if err != nil {
		return nil, err
	}
	b := &executorBackend{env: env, cfg: cfg, log: lg, opts: o, hbInterval: interval, hbMaxFailures: max(1, maxFailures),
		maxSize: maxSize, hbStop: make(chan struct{}), finished: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b, nil
}

// ThreadCount makes the endpoint serial on a dedicated goroutine.
func (b *executorBackend) ThreadCount() int { return 1 }

func (b *executorBackend) OnStart(ctx *actor.Context) error {
	b.self.Store(ctx.Self())
	go b.register(ctx.Self())
	return nil
}

// register looks the driver up and asks RegisterExecutor, off the loop.
func (b *executorBackend) register(self *actor.Ref) {
	url := b.cfg.DriverURL
	driver, err := b.env.SetupEndpointRefByURI(b.ctx, url)
	if err != nil {
		b.exitExecutor(1, "Cannot register with driver: "+url, err, false)
		return
	}
	b.driver.Store(driver)
	b.log.Info().Str("driver", url).Msg("Connecting to driver")
	_, err = actor.ResultAs[*messages.BoolReply](driver.Ask(b.ctx, &messages.RegisterExecutor{
		ExecutorId:        b.cfg.ExecutorID,
		ExecutorRef:       self.Proto(),
		Hostname:          b.cfg.Hostname,
		Cores:             int32(b.cfg.Cores),
		LogUrls:           b.cfg.LogURLs,
		Attributes:        b.cfg.Attributes,
		ResourceProfileId: int32(b.cfg.ResourceProfileID),
	}))
	if err != nil {
		b.exitExecutor(1, "Cannot register with driver: "+url, err, false)
		return
	}
	if err := self.Send(&messages.RegisteredExecutor{}); err != nil {
		b.exitExecutor(1, "Cannot register with driver: "+url, err, false)
	}
}

func (b *executorBackend) Receive(ctx *actor.Context, msg proto.Message) error {
	switch m := msg.(type) {
	case *messages.RegisteredExecutor:
		b.registered()
	case *messages.LaunchTask:
		if b.runner == nil {
			b.exitExecutor(1, "Received LaunchTask command but executor was null", nil, true)
			return nil
		}
		b.runner.launch(m)
	case *messages.KillTask:
		if b.runner == nil {
			b.exitExecutor(1, "Received KillTask command but executor was null", nil, true)
			return nil
		}
		b.runner.kill(m.GetTaskId(), m.GetReason())
	case *messages.StopExecutor:
		b.stopping.Store(true)
		b.log.Info().Msg("Driver commanded a shutdown")
		return ctx.Self().Send(&messages.Shutdown{})
	case *messages.Shutdown:
		b.shutdown()
	case *messages.DecommissionExecutor:
		b.decommissionOnLoop()
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (b *executorBackend) registered() {
	if b.runner != nil || b.stopping.Load() {
		return
	}
	driver := b.driver.Load()
	if driver == nil {
		b.log.Warn().Msg("RegisteredExecutor before the registration: ignored")
		return
	}
	b.log.Info().Msg("Successfully registered with driver")
	b.runner = newTaskRunner(b.cfg.ExecutorID, driver, b.cfg.Cores, b.maxSize, b.log)
	go b.heartbeat(b.env.RemoteRef(driver.Address(), HeartbeatEndpointName), b.runner)
	if err := driver.Send(&messages.LaunchedExecutor{ExecutorId: b.cfg.ExecutorID}); err != nil {
		b.exitExecutor(1, "Cannot tell the driver that the executor is ready", err, false)
	}
}

// shutdown stops the runner off the loop (a handler must never wait for its
// own env to stop) and then marks the executor finished.
func (b *executorBackend) shutdown() {
	b.stopping.Store(true)
	r := b.runner
	b.stopHeartbeats()
	go func() {
		if r != nil {
			r.stop(b.opts.stopTimeout)
		}
		b.awaitNotified()
		b.finish()
	}()
}

// awaitNotified waits until the driver has answered the RemoveExecutor of
// exitExecutor, if there was one.
func (b *executorBackend) awaitNotified() {
	b.mu.Lock()
	f := b.notified
	b.mu.Unlock()
	if f == nil {
		return
	}
	if _, err := f.Result(); err != nil {
		b.log.Debug().Err(err).Msg("the driver did not acknowledge the executor's removal")
	}
}

func (b *executorBackend) stopHeartbeats() { b.hbOnce.Do(func() { close(b.hbStop) }) }

// decommission runs on RunExecutor's goroutine when its context ends.
func (b *executorBackend) decommission() {
	if b.stopping.Load() {
		return
	}
	if d := b.driver.Load(); d != nil {
		t := b.env.AskTimeout()
		if _, err := d.AskSyncWithTimeout(context.Background(), &messages.ExecutorDecommissioning{ExecutorId: b.cfg.ExecutorID}, t); err != nil {
			b.log.Warn().Err(err).Msg("could not tell the driver that the executor is decommissioning")
		}
	}
	if self := b.self.Load(); self == nil || self.Send(&messages.DecommissionExecutor{}) != nil {
		b.finish()
	}
}

func (b *executorBackend) decommissionOnLoop() {
	if b.stopping.Load() {
		return
	}
	const reason = "Executor decommissioned"
	b.log.Info().Msg("Decommissioning: finishing the running tasks")
	if b.runner == nil {
		b.exitExecutor(0, reason, nil, true)
		return
	}
	idle := b.runner.drain()
	go func() {
		select {
		case <-idle:
			b.exitExecutor(0, reason, nil, true)
		case <-b.finished:
		}
	}()
}

// exitExecutor makes the executor exit with code and reason, once (Spark's
// exitExecutor): it tells the driver when notify is set, then shuts down.
func (b *executorBackend) exitExecutor(code int, reason string, cause error, notify bool) {
	if !b.stopping.CompareAndSwap(false, true) {
		b.log.Info().Str("reason", reason).Msg("Skip exiting executor since it's been already asked to exit before")
		return
	}
	b.mu.Lock()
	b.exitCode, b.exitReason, b.exitErr = code, reason, cause
	b.mu.Unlock()
	ev := b.log.Error()
	if code == 0 {
		ev = b.log.Info()
	}
	ev.Err(cause).Int("code", code).Msg(reason)
	if d := b.driver.Load(); notify && d != nil {
		// An ask, not a send: its reply shows that everything sent before
		// (the last status updates) reached the driver, so shutting the env
		// down after it loses nothing.
		f := d.AskWithTimeout(context.Background(), &messages.RemoveExecutor{ExecutorId: b.cfg.ExecutorID, Reason: reason},
			actor.RpcTimeout{Duration: b.opts.stopTimeout, Key: "executor stop timeout"})
		b.mu.Lock()
		b.notified = f
		b.mu.Unlock()
	}
	if self := b.self.Load(); self == nil || self.Send(&messages.Shutdown{ExitCode: int32(code)}) != nil {
		b.stopHeartbeats()
		go func() {
			b.awaitNotified()
			b.finish()
		}()
	}
}

func (b *executorBackend) finish() { b.finishOnce.Do(func() { close(b.finished) }) }

func (b *executorBackend) result() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exitCode == 0 {
		return nil
	}
	return &ExitError{Code: b.exitCode, Reason: b.exitReason, Err: b.exitErr}
}

func (b *executorBackend) OnDisconnected(_ *actor.Context, addr actor.RpcAddress) error {
	if b.stopping.Load() {
		b.log.Info().Str("address", addr.String()).Msg("Driver disconnected during shutdown")
		return nil
	}
	if d := b.driver.Load(); d != nil && d.Address() == addr {
		b.exitExecutor(1, fmt.Sprintf("Driver %s disassociated! Shutting down.", addr), nil, false)
		return nil
	}
	b.log.Warn().Str("address", addr.String()).Msg("An unknown driver disconnected")
	return nil
}

func (b *executorBackend) OnStop(*actor.Context) error {
	b.cancel()
	b.stopHeartbeats()
	r := b.runner
	go func() {
		if r != nil {
			r.stop(b.opts.stopTimeout)
		}
		b.finish()
	}()
	return nil
}

func (b *executorBackend) OnError(_ *actor.Context, err error) {
	b.log.Error().Err(err).Msg("executor backend error")
}

// heartbeat asks the driver's HeartbeatReceiver every heartbeat interval;
// after spark.executor.heartbeat.maxFailures failures in a row the executor
// exits with ExitCodeHeartbeatFailure.
func (b *executorBackend) heartbeat(receiver *actor.Ref, r *taskRunner) {
	t := time.NewTicker(b.hbInterval)
	defer t.Stop()
	timeout := actor.RpcTimeout{Duration: b.hbInterval, Key: KeyHeartbeatInterval}
	failures := 0
	for {
		select {
		case <-b.hbStop:
			return
		case <-t.C:
		}
		_, err := receiver.AskWithTimeout(b.ctx, &messages.Heartbeat{ExecutorId: b.cfg.ExecutorID, RunningTasks: int32(r.numBusy())}, timeout).Result()
		if err == nil {
			failures = 0
			continue
		}
		if errors.Is(err, context.Canceled) || b.stopping.Load() {
			return
		}
		failures++
		b.log.Warn().Err(err).Int("failures", failures).Msg("Issue communicating with driver in heartbeater")
		if failures >= b.hbMaxFailures {
			b.exitExecutor(ExitCodeHeartbeatFailure,
				fmt.Sprintf("Unable to send heartbeats to driver more than %d times", b.hbMaxFailures), err, true)
			return
		}
	}
}
