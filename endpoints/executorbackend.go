package endpoints

// This file holds the Executor endpoint (Spark's
// CoarseGrainedExecutorBackend): its construction, its registration with the
// driver and its typed message handlers.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// executorBackend is the Executor endpoint (Spark's
// CoarseGrainedExecutorBackend): serial, on a loop of its own.
type executorBackend struct {
	*actor.Router
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
	b := &executorBackend{Router: actor.NewRouter(), env: env, cfg: cfg, log: lg, opts: o, hbInterval: interval, hbMaxFailures: max(1, maxFailures),
		maxSize: maxSize, hbStop: make(chan struct{}), finished: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	// The executor only receives one-way messages; an ask is unsupported.
	r := b.Router
	actor.Handle(r, func(*actor.Context, *messages.RegisteredExecutor) error {
		b.registered()
		return nil
	})
	actor.Handle(r, b.launchTask)
	actor.Handle(r, b.killTask)
	actor.Handle(r, b.stopExecutor)
	actor.Handle(r, func(*actor.Context, *messages.Shutdown) error {
		b.shutdown()
		return nil
	})
	actor.Handle(r, func(*actor.Context, *messages.DecommissionExecutor) error {
		b.decommissionOnLoop()
		return nil
	})
	return b, nil
}

// ThreadCount makes the endpoint serial on a dedicated goroutine.
func (b *executorBackend) ThreadCount() int { return 1 }

// OnStart registers with the driver, off the loop.
func (b *executorBackend) OnStart(ctx *actor.Context) error {
	b.self.Store(ctx.Self())
	if b.stopping.Load() {
		return nil // RunExecutor's ctx ended before the executor started
	}
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

// launchTask runs a task on the runner.
func (b *executorBackend) launchTask(_ *actor.Context, m *messages.LaunchTask) error {
	if b.runner == nil {
		b.exitExecutor(1, "Received LaunchTask command but executor was null", nil, true)
		return nil
	}
	b.runner.launch(m)
	return nil
}

// killTask cancels a running task's context.
func (b *executorBackend) killTask(_ *actor.Context, m *messages.KillTask) error {
	if b.runner == nil {
		b.exitExecutor(1, "Received KillTask command but executor was null", nil, true)
		return nil
	}
	b.runner.kill(m.GetTaskId(), m.GetReason())
	return nil
}

// stopExecutor is the driver's order to shut down.
func (b *executorBackend) stopExecutor(ctx *actor.Context, _ *messages.StopExecutor) error {
	b.stopping.Store(true)
	b.log.Info().Msg("Driver commanded a shutdown")
	return ctx.Self().Send(&messages.Shutdown{})
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
	b.runner = newTaskRunner(b.cfg.ExecutorID, driver, b.cfg.Cores, b.maxSize, &dependencies{env: b.env, dir: b.cfg.FilesDir}, b.log)
	go b.heartbeat(b.env.RemoteRef(driver.Address(), HeartbeatEndpointName), b.runner)
	if err := driver.Send(&messages.LaunchedExecutor{ExecutorId: b.cfg.ExecutorID}); err != nil {
		b.exitExecutor(1, "Cannot tell the driver that the executor is ready", err, false)
	}
}

// OnDisconnected makes the executor exit when its driver went away.
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

// OnStop ends the registration and the heartbeats, and stops the task
// runner off the loop.
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

// OnError logs the errors of the handlers.
func (b *executorBackend) OnError(_ *actor.Context, err error) {
	b.log.Error().Err(err).Msg("executor backend error")
}
