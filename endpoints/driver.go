package endpoints

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// ReasonDisassociated is the loss reason of an executor whose connection
// to the driver closed (Spark's text).
const ReasonDisassociated = "Remote RPC client disassociated. Likely due to containers exceeding thresholds, " +
	"or network issues. Check driver logs for WARN messages."

// ReasonKilled is the loss reason of an executor removed with KillExecutor.
const ReasonKilled = "Executor killed by driver."

// ExecutorInfo describes a registered executor.
type ExecutorInfo struct {
	ID      string
	Host    string
	Address actor.RpcAddress
	// TotalCores is what the executor registered with; FreeCores what no
	// task holds (0 until the executor said it is ready, see Ready).
	TotalCores int
	FreeCores  int
	// Ready is true once the executor sent LaunchedExecutor: it gets tasks.
	Ready            bool
	Decommissioning  bool
	RegistrationTime time.Time
	LogURLs          map[string]string
	Attributes       map[string]string
}

// executorData is the driver's record of an executor (Spark's
// ExecutorData). Guarded by Driver.mu.
type executorData struct {
	id              string
	ref             *actor.Ref
	addr            actor.RpcAddress
	host            string
	totalCores      int
	freeCores       int
	ready           bool
	decommissioning bool
	pendingLoss     bool // disconnected; waiting for the cluster manager's loss reason
	registered      time.Time
	logURLs         map[string]string
	attributes      map[string]string
}

// active reports whether the executor gets tasks: ready, not
// decommissioning, not waiting for its loss reason (Spark's isExecutorActive).
func (ex *executorData) active() bool { return ex.ready && !ex.decommissioning && !ex.pendingLoss }

func (ex *executorData) info() ExecutorInfo {
	return ExecutorInfo{ID: ex.id, Host: ex.host, Address: ex.addr, TotalCores: ex.totalCores, FreeCores: ex.freeCores,
		Ready: ex.ready, Decommissioning: ex.decommissioning, RegistrationTime: ex.registered,
		LogURLs: maps.Clone(ex.logURLs), Attributes: maps.Clone(ex.attributes)}
}

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

	reviveInterval time.Duration
	excluded       map[string]bool
	cm             ClusterManager

	// bg tracks the goroutines that ask the cluster manager for loss
	// reasons; bgCtx ends them when the driver stops.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc

	mu         sync.Mutex
	sched      *taskScheduler
	executors  map[string]*executorData
	byAddr     map[actor.RpcAddress]string
	totalCores int
	changed    chan struct{} // closed and replaced when the executors change
	stopped    bool

	stopOnce sync.Once
	stopErr  error
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
	conf := env.Conf()
	maxFailures, err := conf.GetInt(KeyTaskMaxFailures, 4)
	if err != nil {
		return nil, err
	}
	cpus, err := conf.GetInt(KeyTaskCpus, 1)
	if err != nil {
		return nil, err
	}
	if maxFailures < 1 || cpus < 1 {
		return nil, fmt.Errorf("%w: %s and %s must be at least 1", ErrInvalidConfig, KeyTaskMaxFailures, KeyTaskCpus)
	}
	maxSize, err := conf.MaxMessageSize()
	if err != nil {
		return nil, err
	}
	revive, err := conf.GetDuration(KeyReviveInterval, "1s", time.Millisecond)
	if err != nil {
		return nil, err
	}
	hb, err := newHeartbeatReceiver(conf)
	if err != nil {
		return nil, err
	}
	busCapacity, err := conf.GetInt(KeyListenerBusCapacity, defaultListenerBusCapacity)
	if err != nil {
		return nil, err
	}
	if busCapacity < 1 {
		return nil, fmt.Errorf("%w: %s must be at least 1", ErrInvalidConfig, KeyListenerBusCapacity)
	}
	d := &Driver{
		env:            env,
		log:            base.With().Str("component", "driver").Logger(),
		reviveInterval: revive,
		excluded:       make(map[string]bool),
		cm:             o.cm,
		sched:          newTaskScheduler(maxFailures, cpus, maxSize),
		executors:      make(map[string]*executorData),
		byAddr:         make(map[actor.RpcAddress]string),
		changed:        make(chan struct{}),
	}
	for _, h := range o.excluded {
		d.excluded[h] = true
	}
	d.bus = newListenerBus(d.log, busCapacity)
	for _, l := range o.listeners {
		d.bus.add(l)
	}
	allocators := []ExecutorAllocator{o.allocator}
	if a, ok := o.cm.(ExecutorAllocator); ok && !sameValue(a, o.allocator) {
		allocators = append(allocators, a)
	}
	for _, a := range allocators {
		if a == nil {
			continue
		}
		d.bus.add(ListenerFunc(func(ev Event) {
			if e, ok := ev.(ExecutorRemoved); ok {
				a.ExecutorLost(e.ExecutorID, e.Reason)
			}
		}))
	}
	d.bgCtx, d.bgCancel = context.WithCancel(context.Background())
	hb.d = d
	if d.hbRef, err = env.RegisterEndpoint(HeartbeatEndpointName, hb); err != nil {
		d.bgCancel()
		_ = d.bus.stop(context.Background())
		return nil, err
	}
	if d.ref, err = env.RegisterEndpoint(DriverEndpointName, &driverEndpoint{d: d}); err != nil {
		_ = env.Stop(d.hbRef)
		d.bgCancel()
		_ = d.bus.stop(context.Background())
		return nil, err
	}
	return d, nil
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

// DroppedEvents returns how many events the listener bus dropped because
// spark.scheduler.listenerbus.eventqueue.capacity events were waiting for a
// slow listener.
func (d *Driver) DroppedEvents() int64 { return d.bus.droppedEvents() }

// Executors returns the registered executors, sorted by id.
func (d *Driver) Executors() []ExecutorInfo {
	d.mu.Lock()
	out := make([]ExecutorInfo, 0, len(d.executors))
	for _, ex := range d.executors {
		out = append(out, ex.info())
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b ExecutorInfo) int {
		if len(a.ID) != len(b.ID) {
			return len(a.ID) - len(b.ID)
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// TotalCores returns the cores of every registered executor.
func (d *Driver) TotalCores() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.totalCores
}

// WaitForExecutors waits until at least n executors are ready for tasks
// (registered and launched), or ctx ends.
func (d *Driver) WaitForExecutors(ctx context.Context, n int) error {
	for {
		d.mu.Lock()
		ready := 0
		for _, ex := range d.executors {
			if ex.ready && !ex.pendingLoss {
				ready++
			}
		}
		ch := d.changed
		d.mu.Unlock()
		if ready >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d executors (%d ready): %w", n, ready, context.Cause(ctx))
		}
	}
}

// WaitForExecutorsGone waits until none of ids is registered, or ctx ends.
func (d *Driver) WaitForExecutorsGone(ctx context.Context, ids ...string) error {
	for {
		d.mu.Lock()
		left := 0
		for _, id := range ids {
			if d.executors[id] != nil {
				left++
			}
		}
		ch := d.changed
		d.mu.Unlock()
		if left == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d executors to go: %w", left, context.Cause(ctx))
		}
	}
}

// RemoveExecutor removes executor id with the loss reason: the driver tells
// it to stop, forgets it, and runs its tasks elsewhere. It does not wait.
func (d *Driver) RemoveExecutor(id, reason string) error {
	return d.ref.Send(&messages.RemoveExecutor{ExecutorId: id, Reason: reason})
}

// KillExecutor removes executor id with the reason ReasonKilled.
func (d *Driver) KillExecutor(id string) error { return d.RemoveExecutor(id, ReasonKilled) }

// RunJob runs one task of the registered function taskName per payload
// (partition i gets payloads[i]) on the executors, and returns the results
// in partition order. A failed task is retried up to spark.task.maxFailures
// times in all; the job then fails with a *JobAbortedError carrying the last
// error. Tasks wait for executors: with none registered, RunJob waits until
// one is ready or ctx ends. Cancelling ctx kills the job's running tasks and
// returns ctx's cause.
func (d *Driver) RunJob(ctx context.Context, taskName string, payloads [][]byte) ([][]byte, error) {
	if _, ok := LookupTask(taskName); !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTask, taskName)
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil, ErrDriverStopped
	}
	j := d.sched.submit(taskName, payloads)
	if d.bus.wanted() {
		d.bus.post(JobStart{Time: j.started, JobID: j.id, TaskName: taskName, NumTasks: len(payloads)})
	}
	if len(payloads) == 0 {
		d.sched.end(j, nil)
		d.postJobEnd(j)
		d.mu.Unlock()
		return [][]byte{}, nil
	}
	d.mu.Unlock()
	if err := d.ref.Send(&messages.ReviveOffers{}); err != nil {
		d.cancelJob(j, err)
		return nil, fmt.Errorf("job %d: %w", j.id, err)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		d.cancelJob(j, context.Cause(ctx))
		<-j.done
	}
	if j.err != nil {
		return nil, j.err
	}
	return j.results, nil
}

// cancelJob ends j with err unless it has ended, and kills its tasks.
func (d *Driver) cancelJob(j *job, err error) {
	d.mu.Lock()
	var kills []kill
	if !j.ended {
		d.sched.end(j, err)
		kills = d.sched.killRunning(j, "Job cancelled: "+err.Error())
		d.postJobEnd(j)
	}
	d.mu.Unlock()
	d.sendKills(kills)
}

func (d *Driver) postJobEnd(j *job) {
	if d.bus.wanted() {
		now := time.Now()
		d.bus.post(JobEnd{Time: now, JobID: j.id, Err: j.err, Duration: now.Sub(j.started)})
	}
}

// Stop stops the application's executors (StopExecutors) and the driver's
// endpoints (StopDriver), fails the jobs still running with
// ErrDriverStopped, and delivers the remaining events to the listeners. It
// does not shut the env down. Calling it again returns the first result.
func (d *Driver) Stop(ctx context.Context) error {
	d.stopOnce.Do(func() {
		d.mu.Lock()
		d.stopped = true
		var kills []kill
		for _, j := range slices.Clone(d.sched.jobs) {
			d.sched.end(j, ErrDriverStopped)
			kills = append(kills, d.sched.killRunning(j, "Driver stopped")...)
			d.postJobEnd(j)
		}
		d.mu.Unlock()
		d.sendKills(kills)
		var errs []error
		if _, err := d.ref.AskSync(ctx, &messages.StopExecutors{}); err != nil && !errors.Is(err, actor.ErrEnvStopped) {
			errs = append(errs, fmt.Errorf("stopping executors: %w", err))
		}
		if _, err := d.ref.AskSync(ctx, &messages.StopDriver{}); err != nil && !errors.Is(err, actor.ErrEnvStopped) {
			errs = append(errs, fmt.Errorf("stopping driver: %w", err))
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
		d.stopErr = errors.Join(errs...)
	})
	return d.stopErr
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

func (d *Driver) sendLaunches(ls []launch) {
	for _, l := range ls {
		if err := l.ref.Send(l.msg); err != nil {
			// The executor cannot be reached: remove it (with a cluster
			// manager, disable it and ask why), so that its tasks run
			// elsewhere.
			d.log.Warn().Err(err).Int64("tid", l.msg.TaskId).Str("executor", l.exec).Msg("could not launch task")
			if d.cm != nil {
				d.disableExecutor(l.exec)
				continue
			}
			_ = d.ref.Send(&messages.RemoveExecutor{ExecutorId: l.exec, Reason: "Could not launch a task: " + err.Error()})
		}
	}
}

func (d *Driver) sendKills(ks []kill) {
	for _, k := range ks {
		if err := k.ref.Send(k.msg); err != nil {
			d.log.Debug().Err(err).Int64("tid", k.msg.TaskId).Msg("could not send KillTask")
		}
	}
}

// publish posts the events of a scheduling step; it runs under d.mu so
// that events keep the order of the state changes.
func (d *Driver) publish(out *offerResult) {
	for _, j := range out.ended {
		if j.err != nil {
			d.log.Error().Err(j.err).Int64("job", j.id).Msg("job failed")
		}
	}
	if !d.bus.wanted() {
		return
	}
	for _, e := range out.endedAt {
		d.bus.post(e)
	}
	for _, j := range out.ended {
		d.postJobEnd(j)
	}
	for _, a := range out.started {
		d.bus.post(TaskStart{Time: a.launched, JobID: a.job.id, TaskID: a.id, Partition: a.partition,
			Attempt: a.attempt, ExecutorID: a.exec.id})
	}
}

// makeOffers offers the free cores of only (or of every active executor
// when only is nil) to the pending tasks. It runs under d.mu.
func (d *Driver) makeOffers(only *executorData, out *offerResult) {
	if !d.sched.hasPending() {
		return
	}
	var offers []*executorData
	if only != nil {
		if !only.active() || only.freeCores < d.sched.cpus {
			return
		}
		offers = []*executorData{only}
	} else {
		offers = make([]*executorData, 0, len(d.executors))
		for _, ex := range d.executors { // map order: a shuffle, as in Spark
			if ex.active() && ex.freeCores >= d.sched.cpus {
				offers = append(offers, ex)
			}
		}
	}
	if len(offers) > 0 {
		d.sched.resourceOffers(offers, out)
	}
}

// driverEndpoint is the CoarseGrainedScheduler endpoint: serial, on a loop
// of its own (Spark's IsolatedThreadSafeRpcEndpoint).
type driverEndpoint struct {
	d *Driver
}

// ThreadCount makes the endpoint serial on a dedicated goroutine.
func (e *driverEndpoint) ThreadCount() int { return 1 }

// OnStart revives offers every spark.scheduler.revive.interval, so that
// tasks are offered even when no event triggers it.
func (e *driverEndpoint) OnStart(ctx *actor.Context) error {
	if every := e.d.reviveInterval; every > 0 {
		if _, err := ctx.SendEvery(every, &messages.ReviveOffers{}); err != nil {
			return err
		}
	}
	return nil
}

func (e *driverEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	d := e.d
	switch m := msg.(type) {
	case *messages.StatusUpdate:
		d.statusUpdate(m)
	case *messages.ReviveOffers:
		var out offerResult
		d.mu.Lock()
		d.makeOffers(nil, &out)
		d.publish(&out)
		d.mu.Unlock()
		d.sendLaunches(out.launches)
		d.sendKills(out.kills)
	case *messages.LaunchedExecutor:
		d.launched(m.GetExecutorId())
	case *messages.KillTask:
		d.mu.Lock()
		ex := d.executors[m.GetExecutorId()]
		d.mu.Unlock()
		if ex == nil {
			d.log.Warn().Int64("tid", m.GetTaskId()).Str("executor", m.GetExecutorId()).
				Msg("Attempted to kill task for unknown executor")
			return nil
		}
		return ex.ref.Send(m)
	case *messages.RemoveExecutor:
		d.removeExecutor(m.GetExecutorId(), m.GetReason())
	case *messages.StopExecutors:
		d.stopExecutors()
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (e *driverEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	d := e.d
	switch m := msg.(type) {
	case *messages.RetrieveSparkAppConfig:
		props := d.env.Conf().All()
		for k := range props {
			if !strings.HasPrefix(k, "spark.") {
				delete(props, k)
			}
		}
		ctx.Reply(&messages.SparkAppConfig{SparkProperties: props, ResourceProfileId: m.GetResourceProfileId()})
	case *messages.RegisterExecutor:
		d.register(ctx, m)
	case *messages.StopExecutors:
		d.stopExecutors()
		ctx.Reply(&messages.BoolReply{Value: true})
	case *messages.StopDriver:
		ctx.Reply(&messages.BoolReply{Value: true})
		return ctx.Stop()
	case *messages.ExecutorDecommissioning:
		d.mu.Lock()
		ex := d.executors[m.GetExecutorId()]
		if ex != nil {
			ex.decommissioning = true
			d.notifyChanged()
		}
		d.mu.Unlock()
		if ex != nil {
			d.log.Info().Str("executor", ex.id).Msg("executor is decommissioning; it gets no new tasks")
		}
		ctx.Reply(&messages.BoolReply{Value: ex != nil})
	case *messages.RemoveExecutor:
		d.removeExecutor(m.GetExecutorId(), m.GetReason())
		ctx.Reply(&messages.BoolReply{Value: true})
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (e *driverEndpoint) OnDisconnected(_ *actor.Context, addr actor.RpcAddress) error {
	d := e.d
	d.mu.Lock()
	id, ok := d.byAddr[addr]
	d.mu.Unlock()
	switch {
	case !ok:
	case d.cm != nil:
		d.disableExecutor(id)
	default:
		d.removeExecutor(id, ReasonDisassociated)
	}
	return nil
}

func (e *driverEndpoint) OnError(_ *actor.Context, err error) {
	e.d.log.Error().Err(err).Msg("driver endpoint error")
}

func (d *Driver) register(cc *actor.CallContext, m *messages.RegisterExecutor) {
	id, host := m.GetExecutorId(), m.GetHostname()
	refuse := func(kind error, text string) {
		d.log.Warn().Str("executor", id).Str("host", host).Msg(text)
		cc.SendFailure(&registrationError{kind: kind, text: text})
	}
	ref, err := d.env.RefFromProto(m.GetExecutorRef())
	if err != nil {
		cc.SendFailure(fmt.Errorf("registering executor %s: %w", id, err))
		return
	}
	addr := ref.Address()
	if addr.IsZero() {
		addr = cc.SenderAddress()
	}
	d.mu.Lock()
	if _, dup := d.executors[id]; dup {
		d.mu.Unlock()
		refuse(ErrDuplicateExecutor, "Duplicate executor ID: "+id)
		return
	}
	if d.excluded[host] {
		d.mu.Unlock()
		refuse(ErrExecutorExcluded, "Executor is excluded due to failures: "+id)
		return
	}
	ex := &executorData{id: id, ref: ref, addr: addr, host: host, totalCores: int(m.GetCores()),
		registered: time.Now(), logURLs: m.GetLogUrls(), attributes: m.GetAttributes()}
	d.executors[id] = ex
	d.byAddr[addr] = id
	d.totalCores += ex.totalCores
	d.notifyChanged()
	if d.bus.wanted() {
		d.bus.post(ExecutorAdded{Time: ex.registered, ExecutorID: id, Host: host, Address: addr, Cores: ex.totalCores,
			LogURLs: maps.Clone(ex.logURLs)})
	}
	d.mu.Unlock()
	d.log.Info().Str("executor", id).Str("host", host).Str("address", addr.String()).Int("cores", ex.totalCores).
		Msg("Registered executor")
	_ = d.hbRef.Send(&messages.ExecutorRegistered{ExecutorId: id})
	cc.Reply(&messages.BoolReply{Value: true})
}

func (d *Driver) launched(id string) {
	var out offerResult
	d.mu.Lock()
	ex := d.executors[id]
	if ex != nil && !ex.ready {
		ex.ready = true
		ex.freeCores = ex.totalCores
		d.notifyChanged()
		d.makeOffers(ex, &out)
		d.publish(&out)
	}
	d.mu.Unlock()
	if ex == nil {
		d.log.Warn().Str("executor", id).Msg("LaunchedExecutor from an unknown executor")
		return
	}
	d.sendLaunches(out.launches)
	d.sendKills(out.kills)
}

func (d *Driver) statusUpdate(m *messages.StatusUpdate) {
	switch m.GetState() {
	case messages.TaskState_TASK_STATE_LAUNCHING, messages.TaskState_TASK_STATE_RUNNING:
		return
	}
	var out offerResult
	d.mu.Lock()
	a := d.sched.statusUpdate(m, &out)
	if a != nil {
		if ex := a.exec; d.executors[ex.id] == ex {
			ex.freeCores += d.sched.cpus
			if len(out.ended) > 0 {
				d.makeOffers(nil, &out)
			} else {
				d.makeOffers(ex, &out)
			}
		} else if m.GetState() != messages.TaskState_TASK_STATE_FINISHED {
			d.makeOffers(nil, &out)
		}
	}
	d.publish(&out)
	d.mu.Unlock()
	if a == nil {
		d.log.Debug().Int64("tid", m.GetTaskId()).Str("executor", m.GetExecutorId()).Msg("ignored an update of an unknown task")
	}
	d.sendLaunches(out.launches)
	d.sendKills(out.kills)
}

func (d *Driver) removeExecutor(id, reason string) {
	var out offerResult
	d.mu.Lock()
	ex := d.executors[id]
	if ex == nil {
		d.mu.Unlock()
		d.log.Debug().Str("executor", id).Str("reason", reason).Msg("asked to remove an unknown executor")
		return
	}
	delete(d.executors, id)
	if d.byAddr[ex.addr] == id {
		delete(d.byAddr, ex.addr)
	}
	d.totalCores -= ex.totalCores
	d.notifyChanged()
	d.sched.executorLost(ex, reason, &out)
	if d.bus.wanted() {
		for _, e := range out.endedAt {
			d.bus.post(e)
		}
		out.endedAt = nil
		d.bus.post(ExecutorRemoved{Time: time.Now(), ExecutorID: id, Reason: reason})
	}
	d.makeOffers(nil, &out)
	d.publish(&out)
	d.mu.Unlock()
	d.log.Warn().Str("executor", id).Str("reason", reason).Msg("Lost executor")
	_ = ex.ref.Send(&messages.StopExecutor{})
	_ = d.hbRef.Send(&messages.ExecutorRemoved{ExecutorId: id})
	d.sendLaunches(out.launches)
	d.sendKills(out.kills)
}

func (d *Driver) stopExecutors() {
	d.mu.Lock()
	refs := make([]*actor.Ref, 0, len(d.executors))
	for _, ex := range d.executors {
		refs = append(refs, ex.ref)
	}
	d.mu.Unlock()
	d.log.Info().Int("executors", len(refs)).Msg("Asking each executor to shut down")
	for _, r := range refs {
		_ = r.Send(&messages.StopExecutor{})
	}
}
