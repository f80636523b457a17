package endpoints

// This file holds the Driver type: its construction, accessors and lifecycle
// (NewDriver, Stop).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/lockhook"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// Driver is the driver side of an application: the CoarseGrainedScheduler
// endpoint that executors register with, the HeartbeatReceiver, the task
// scheduler and the listener bus. Create it with NewDriver on a listening
// env, start executors with its URL, and run jobs with RunJob. Its methods
// are safe for concurrent use.
type Driver struct {
	env   *actor.Env
	log   zerolog.Logger
	bus   *listenerBus
	ref   *actor.Ref
	hbRef *actor.Ref
	// hbTimes mirrors the heartbeat receiver's last-seen times.
	hbTimes heartbeatTimes

	reviveInterval time.Duration
	starvation     time.Duration // spark.starvation.timeout
	excluded       map[string]bool
	// logURLPattern is spark.ui.custom.executor.log.url ("": none).
	logURLPattern string
	cm            ClusterManager
	rand          *rand.Rand // WithRand's; nil for the process's source

	// bg tracks the goroutines that ask the cluster manager for loss
	// reasons; bgCtx ends them when the driver stops.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc

	// sendMu orders the LaunchTask and KillTask messages of scheduling
	// steps: it is taken before mu is released (see unlockAndSend).
	sendMu sync.Mutex

	files addedFiles // AddFile's

	mu         lockhook.Mutex // WithLockRelease's hook runs at each release
	sched      *taskScheduler
	executors  map[string]*executorData
	totalCores int
	changed    chan struct{} // closed and replaced when the executors change
	stopped    bool

	stopOnce sync.Once
	stopErr  error
	// stopCalled is set by the first Stop: a listener's Stop while another
	// is under way must not wait for it (that Stop waits for the bus).
	stopCalled, stopDone atomic.Bool

	metrics *schedulerMetrics // in env's registry while metered is true
	// metered is set while metrics are in the registry: they are taken out
	// once, by the first of Stop and the release of a driver whose env
	// stopped; a second Unregister would take out another driver's, which
	// has the same descriptors.
	metered atomic.Bool

	// allocating counts the ExecutorAllocationManagers running on the
	// driver: they own the cluster manager's target, and KillExecutors,
	// which would lower it behind their back, is refused.
	allocating atomic.Int32
}

// NewDriver registers the driver's endpoints (CoarseGrainedScheduler and
// HeartbeatReceiver) on env, whose configuration is the application's. env
// should listen (executors connect to it); its transport decides how.
func NewDriver(env *actor.Env, opts ...DriverOption) (*Driver, error) {
	var o driverOptions
	for _, opt := range opts {
		opt.applyDriver(&o)
	}
	base := env.Logger()
	if o.logger != nil {
		base = *o.logger
	}
	c, err := parseDriverConf(env.Conf())
	if err != nil {
		return nil, err
	}
	hb := newHeartbeatReceiver(c.hbTimeout, c.hbCheck)
	d := &Driver{
		env:            env,
		log:            base.With().Str("component", "driver").Logger(),
		reviveInterval: c.revive,
		starvation:     c.starvation,
		logURLPattern:  env.Conf().Get(KeyCustomExecutorLogURL, ""),
		excluded:       make(map[string]bool),
		cm:             o.cm,
		rand:           o.rand,
		mu:             lockhook.Mutex{Released: o.lockRelease},
		sched:          newTaskScheduler(c.maxFailures, c.cpus, c.maxSize, c.maxResult),
		executors:      make(map[string]*executorData),
		changed:        make(chan struct{}),
	}
	for _, h := range o.excluded {
		d.excluded[h] = true
	}
	d.startBus(&o, c.busCapacity)
	d.registerMetrics()
	d.bgCtx, d.bgCancel = context.WithCancel(context.Background())
	if err := d.registerEndpoints(hb); err != nil {
		return nil, err
	}
	return d, nil
}

// startBus creates the listener bus with the listeners of o and, for each
// of its allocators, the listener that tells it of lost executors.
func (d *Driver) startBus(o *driverOptions, capacity int) {
	d.bus = newListenerBus(d.log, capacity)
	for _, l := range o.listeners {
		d.bus.add(l)
	}
	for _, a := range o.allocators() {
		d.bus.add(lossListener{a})
	}
}

// registerMetrics registers the scheduler's metrics in the env's registry.
func (d *Driver) registerMetrics() {
	d.metrics = newSchedulerMetrics(d)
	if err := d.env.Metrics().Register(d.metrics); err != nil {
		// Another driver on the same env holds the names: this one runs
		// unmetered rather than fail.
		d.log.Warn().Err(err).Msg("scheduler metrics not registered")
	} else {
		d.metered.Store(true)
	}
}

// registerEndpoints registers hb as the HeartbeatReceiver and the
// CoarseGrainedScheduler endpoint. When one of them cannot be registered,
// it undoes the rest of NewDriver's work (the endpoint registered first,
// the metrics, the background context and the listener bus).
func (d *Driver) registerEndpoints(hb *heartbeatReceiver) error {
	undo := func() {
		d.unregisterMetrics()
		d.bgCancel()
		_ = d.bus.stop(context.Background())
	}
	hb.d = d
	var err error
	if d.hbRef, err = d.env.RegisterEndpoint(HeartbeatEndpointName, hb); err != nil {
		undo()
		return err
	}
	if d.ref, err = d.env.RegisterEndpoint(DriverEndpointName, newDriverEndpoint(d)); err != nil {
		_ = d.env.Stop(d.hbRef)
		undo()
		return err
	}
	return nil
}

// URL returns the driver's address, "spark://CoarseGrainedScheduler@host:port":
// the --driver-url of its executors.
func (d *Driver) URL() string { return d.ref.String() }

// Ref returns the reference of the CoarseGrainedScheduler endpoint.
func (d *Driver) Ref() *actor.Ref { return d.ref }

// Env returns the driver's env.
func (d *Driver) Env() *actor.Env { return d.env }

// AddListener adds l to the listener bus; it sees the events posted from now
// on.
func (d *Driver) AddListener(l Listener) { d.bus.add(l) }

// PostEvent posts ev on the driver's listener bus, in order with the
// driver's own events: whoever runs the driver posts the application's
// ApplicationStart and EnvironmentUpdate before the first job and its
// ApplicationEnd when it returns, before Stop. Like every event, it is
// dropped when the bus is full or has no listener.
func (d *Driver) PostEvent(ev Event) {
	if ev != nil {
		d.bus.post(ev)
	}
}

// DroppedEvents returns how many events the listener bus dropped because
// spark.scheduler.listenerbus.eventqueue.capacity events were waiting for a
// slow listener.
func (d *Driver) DroppedEvents() int64 { return d.bus.droppedEvents() }

// Stop stops the application's executors (StopExecutors) and the driver's
// endpoints (StopDriver), fails the jobs still running with
// ErrDriverStopped, and delivers the remaining events to the listeners. It
// does not shut the env down. Calling it again returns the first result.
// Called from a listener, it does not wait for the listener bus (its own
// goroutine): the remaining events are delivered once the listener returns;
// nor, while another goroutine's Stop is under way (which waits for the
// bus), for that Stop: it then returns nil at once.
func (d *Driver) Stop(ctx context.Context) error {
	if d.stopCalled.Swap(true) && !d.stopDone.Load() && d.bus.onBus() {
		// A listener's Stop while another goroutine's is under way (its
		// JobEnds reach the listener): that Stop waits for the bus, which
		// is this goroutine, so this one must not wait for it.
		return nil
	}
	d.stopOnce.Do(func() {
		d.endJobs()
		var errs []error
		// Each stop is an ask, to wait for it; once ctx has ended (an ask
		// would not even be sent) it is still ordered, without a wait.
		stopStep := func(what string, ask proto.Message, order func() error) {
			var err error
			if ctx.Err() != nil {
				err = order()
			} else {
				_, err = d.ref.AskSync(ctx, ask)
			}
			if err != nil && !errors.Is(err, actor.ErrEnvStopped) {
				errs = append(errs, fmt.Errorf("stopping %s: %w", what, err))
			}
		}
		stopStep("executors", &messages.StopExecutors{}, func() error { return d.ref.Send(&messages.StopExecutors{}) })
		stopStep("driver", &messages.StopDriver{}, func() error { return d.env.Stop(d.ref) })
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("stopping without waiting: %w", context.Cause(ctx)))
		}
		if err := d.env.Stop(d.hbRef); err != nil && !errors.Is(err, actor.ErrEnvStopped) {
			errs = append(errs, err)
		}
		d.bgCancel()
		if err := d.waitBackground(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := d.bus.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("listener bus: %w", err))
		}
		d.unregisterMetrics()
		d.stopErr = errors.Join(errs...)
		d.stopDone.Store(true)
	})
	return d.stopErr
}

// endJobs marks the driver stopped, ends the jobs still running with
// ErrDriverStopped and kills their tasks. Stop calls it, and so does the
// driver endpoint's OnStop, so that a driver whose env shuts down without
// Stop does not leave RunJob waiting forever.
func (d *Driver) endJobs() {
	d.mu.Lock()
	d.stopped = true
	var kills []kill
	for _, j := range slices.Clone(d.sched.jobs) {
		d.sched.end(j, ErrDriverStopped)
		kills = append(kills, d.sched.killRunning(j, "Driver stopped")...)
		d.postJobEnd(j)
	}
	d.publish(&offerResult{endedAt: d.sched.abandonRunning("Driver stopped")})
	d.unlockAndSend(nil, kills)
}

// release frees what a driver holds beyond its endpoints, for a driver
// whose env stops without Stop: the loss-reason asks are cancelled, the
// metrics leave the env's registry, and the listener bus delivers what was
// posted (the JobEnds of endJobs) and ends, without being waited for.
func (d *Driver) release() {
	d.bgCancel()
	d.unregisterMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = d.bus.stop(ctx)
}

// unregisterMetrics takes the driver's metrics out of its env's registry,
// so that a later driver on the env can register its own.
func (d *Driver) unregisterMetrics() {
	if d.metered.Swap(false) {
		d.env.Metrics().Unregister(d.metrics)
	}
}

// waitBackground waits for the loss-reason asks to end (their context is
// cancelled), or for ctx to end.
func (d *Driver) waitBackground(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		d.bg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the cluster manager's loss reasons: %w", context.Cause(ctx))
	}
}

func (d *Driver) notifyChanged() {
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *Driver) isStopped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopped
}
