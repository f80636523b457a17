package endpoints

// This file holds the listener bus: bounded, in-order, asynchronous delivery
// of events to the listeners.

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

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
	// gid is the id of the goroutine that delivers the events (run's),
	// so that stop, called from a listener, does not wait for itself.
	gid atomic.Uint64
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
	b.gid.Store(goid())
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
// Drops not reported yet are reported now. Called from a listener, it does
// not wait: the bus delivers the rest once that listener has returned.
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
	if b.onBus() {
		// Called from a listener (Driver.Stop on a JobEnd, say): the bus
		// goroutine is this one, and waiting for it would never end. It
		// delivers the events left once the listener returns, then ends.
		return nil
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// onBus reports whether the caller runs on the bus goroutine: it is a
// listener.
func (b *listenerBus) onBus() bool { return goid() == b.gid.Load() }

// goid returns the id of the calling goroutine, read from the header of
// its stack trace ("goroutine 42 [running]:", as golang.org/x/net/http2
// reads it for its own checks). Only stop, which is rare, and the bus's
// start call it: it tells a listener's call of stop from another's.
func goid() uint64 {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	if i := bytes.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	id, _ := strconv.ParseUint(string(s), 10, 64)
	return id
}
