package endpoints

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Event is something the driver publishes on its listener bus: one of
// ExecutorAdded, ExecutorRemoved, TaskStart, TaskEnd, JobStart, JobEnd.
type Event interface {
	// When returns when the event happened.
	When() time.Time
	isEvent()
}

// ExecutorAdded is published when the driver registered an executor.
type ExecutorAdded struct {
	Time       time.Time
	ExecutorID string
	Host       string
	Address    actor.RpcAddress
	Cores      int
	LogURLs    map[string]string
}

// ExecutorRemoved is published when the driver removed an executor.
type ExecutorRemoved struct {
	Time       time.Time
	ExecutorID string
	Reason     string
}

// TaskStart is published when the driver launched a task.
type TaskStart struct {
	Time       time.Time
	JobID      int64
	TaskID     int64
	Partition  int
	Attempt    int
	ExecutorID string
}

// TaskEnd is published when a task attempt ended: State is FINISHED, FAILED,
// KILLED or LOST (its executor was lost), Error the reason when it did not
// finish.
type TaskEnd struct {
	Time       time.Time
	JobID      int64
	TaskID     int64
	Partition  int
	Attempt    int
	ExecutorID string
	State      messages.TaskState
	Error      string
	Duration   time.Duration
}

// JobStart is published when RunJob submitted a job.
type JobStart struct {
	Time     time.Time
	JobID    int64
	TaskName string
	NumTasks int
}

// JobEnd is published when a job ended; Err is nil when it succeeded.
type JobEnd struct {
	Time     time.Time
	JobID    int64
	Err      error
	Duration time.Duration
}

// When implements Event.
func (e ExecutorAdded) When() time.Time { return e.Time }

// When implements Event.
func (e ExecutorRemoved) When() time.Time { return e.Time }

// When implements Event.
func (e TaskStart) When() time.Time { return e.Time }

// When implements Event.
func (e TaskEnd) When() time.Time { return e.Time }

// When implements Event.
func (e JobStart) When() time.Time { return e.Time }

// When implements Event.
func (e JobEnd) When() time.Time { return e.Time }

func (ExecutorAdded) isEvent()   {}
func (ExecutorRemoved) isEvent() {}
func (TaskStart) isEvent()       {}
func (TaskEnd) isEvent()         {}
func (JobStart) isEvent()        {}
func (JobEnd) isEvent()          {}

// Listener receives the events of a driver's listener bus, one at a time,
// in the order they were posted, on the bus's own goroutine. A slow listener
// delays the other listeners, never the driver. A panic in OnEvent is logged
// and ignored.
type Listener interface {
	OnEvent(ev Event)
}

// ListenerFunc adapts a function to a Listener.
type ListenerFunc func(ev Event)

// OnEvent calls f.
func (f ListenerFunc) OnEvent(ev Event) { f(ev) }

// NewLogListener returns a listener that logs every event to l (executor
// and job events at info level, task events at debug level), with the field
// component=listener.
func NewLogListener(l zerolog.Logger) Listener {
	log := l.With().Str("component", "listener").Logger()
	return ListenerFunc(func(ev Event) {
		switch e := ev.(type) {
		case ExecutorAdded:
			log.Info().Str("executor", e.ExecutorID).Str("host", e.Host).Str("address", e.Address.String()).
				Int("cores", e.Cores).Msg("Executor added")
		case ExecutorRemoved:
			log.Info().Str("executor", e.ExecutorID).Str("reason", e.Reason).Msg("Executor removed")
		case TaskStart:
			log.Debug().Int64("job", e.JobID).Int64("tid", e.TaskID).Int("partition", e.Partition).
				Int("attempt", e.Attempt).Str("executor", e.ExecutorID).Msg("Task started")
		case TaskEnd:
			lev := log.Debug()
			if e.State != messages.TaskState_TASK_STATE_FINISHED {
				lev = log.Warn()
			}
			lev.Int64("job", e.JobID).Int64("tid", e.TaskID).Int("partition", e.Partition).
				Int("attempt", e.Attempt).Str("executor", e.ExecutorID).Str("state", stateName(e.State)).
				Str("error", e.Error).Dur("duration", e.Duration).Msg("Task ended")
		case JobStart:
			log.Info().Int64("job", e.JobID).Str("task", e.TaskName).Int("tasks", e.NumTasks).Msg("Job started")
		case JobEnd:
			lev := log.Info()
			if e.Err != nil {
				lev = log.Error().Err(e.Err)
			}
			lev.Int64("job", e.JobID).Dur("duration", e.Duration).Msg("Job ended")
		}
	})
}

// stateName returns "FINISHED" for TASK_STATE_FINISHED and so on.
func stateName(s messages.TaskState) string {
	n := s.String()
	const prefix = "TASK_STATE_"
	if len(n) > len(prefix) && n[:len(prefix)] == prefix {
		return n[len(prefix):]
	}
	return n
}

// KeyListenerBusCapacity is how many events the driver's listener bus holds
// before it drops new ones (default 10000, Spark's
// spark.scheduler.listenerbus.eventqueue.capacity).
const KeyListenerBusCapacity = "spark.scheduler.listenerbus.eventqueue.capacity"

// defaultListenerBusCapacity is Spark's default for KeyListenerBusCapacity.
const defaultListenerBusCapacity = 10000

// dropReportInterval is how often, at most, the bus logs the events it
// dropped (Spark's AsyncEventQueue.LOGGING_INTERVAL).
const dropReportInterval = time.Minute

// listenerBus delivers events to listeners asynchronously, in order, on
// one goroutine of its own. post never blocks: it holds at most capacity
// events not yet delivered to every listener, and drops, counts and logs
// (at most once a minute) the events posted beyond that, as Spark's
// AsyncEventQueue does.
type listenerBus struct {
	log      zerolog.Logger
	capacity int
	now      func() time.Time // the clock of the drop reports

	mu        sync.Mutex
	listeners []Listener
	queue     []Event
	spare     []Event
	stopped   bool
	active    atomic.Bool // there is at least one listener

	// pending counts the events posted and not yet delivered (those in
	// queue and those of the batch being delivered); only post, under mu,
	// adds to it, so it never exceeds capacity.
	pending atomic.Int64
	dropped atomic.Int64
	// Under mu: the last drop report and the drop count it covered.
	lastReport time.Time
	reported   int64

	wake chan struct{}
	done chan struct{}
}

func newListenerBus(log zerolog.Logger, capacity int) *listenerBus {
	b := &listenerBus{log: log, capacity: capacity, now: time.Now,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *listenerBus) add(l Listener) {
	if l == nil {
		return
	}
	b.mu.Lock()
	ls := make([]Listener, 0, len(b.listeners)+1)
	b.listeners = append(append(ls, b.listeners...), l)
	b.active.Store(true)
	b.mu.Unlock()
}

// wanted reports whether events are worth building.
func (b *listenerBus) wanted() bool { return b.active.Load() }

// post queues ev for the listeners, or drops it when capacity events are
// waiting.
func (b *listenerBus) post(ev Event) {
	b.mu.Lock()
	if b.stopped || len(b.listeners) == 0 {
		b.mu.Unlock()
		return
	}
	if b.pending.Load() >= int64(b.capacity) {
		report := b.dropLocked()
		b.mu.Unlock()
		report()
		return
	}
	b.pending.Add(1)
	b.queue = append(b.queue, ev)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// dropLocked counts a dropped event and returns the report to log once mu
// is released: the first drop is reported at once, the later ones at most
// once every dropReportInterval.
func (b *listenerBus) dropLocked() (report func()) {
	total := b.dropped.Add(1)
	now := b.now()
	first := b.lastReport.IsZero()
	if !first && now.Sub(b.lastReport) < dropReportInterval {
		return func() {}
	}
	return b.reportLocked(now, total, first)
}

// reportLocked records a drop report of the events dropped since the last
// one and returns the function that logs it.
func (b *listenerBus) reportLocked(now time.Time, total int64, first bool) (report func()) {
	n, since := total-b.reported, b.lastReport
	b.lastReport, b.reported = now, total
	return func() {
		if first {
			b.log.Error().Str("key", KeyListenerBusCapacity).Int("capacity", b.capacity).
				Msg("Dropping event from the listener bus. This likely means one of the listeners is too slow " +
					"and cannot keep up with the rate at which events are posted.")
			return
		}
		b.log.Warn().Int64("dropped", n).Int64("total_dropped", total).Time("since", since).
			Str("key", KeyListenerBusCapacity).Int("capacity", b.capacity).
			Msg("Dropped events from the listener bus since the last report")
	}
}

// droppedEvents returns how many events the bus dropped because it was full.
func (b *listenerBus) droppedEvents() int64 { return b.dropped.Load() }

func (b *listenerBus) run() {
	defer close(b.done)
	for {
		b.mu.Lock()
		batch := b.queue
		b.queue = b.spare[:0]
		ls := b.listeners
		stopped := b.stopped
		b.mu.Unlock()
		for i, ev := range batch {
			for _, l := range ls {
				b.deliver(l, ev)
			}
			batch[i] = nil
			b.pending.Add(-1)
		}
		b.mu.Lock()
		b.spare = batch[:0]
		b.mu.Unlock()
		if len(batch) > 0 {
			continue
		}
		if stopped {
			return
		}
		<-b.wake
	}
}

func (b *listenerBus) deliver(l Listener, ev Event) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error().Interface("panic", r).Msg("listener panicked; ignoring")
		}
	}()
	l.OnEvent(ev)
}

// stop delivers the events already posted, then ends the bus goroutine.
// Drops not reported yet are reported now.
func (b *listenerBus) stop(ctx context.Context) error {
	b.mu.Lock()
	report := func() {}
	if !b.stopped {
		if total := b.dropped.Load(); total > b.reported {
			report = b.reportLocked(b.now(), total, b.lastReport.IsZero())
		}
	}
	b.stopped = true
	b.mu.Unlock()
	report()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
