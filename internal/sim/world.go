// The World: one seed's run, its virtual clock, event queue and loop.

package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// World is one seed's simulated application. Everything it runs lives in
// one synctest bubble: time is the bubble's virtual clock, which moves only
// when every goroutine of the bubble is blocked. The world's loop takes one
// event at a time from its queue (a message delivery, a fault, a job's
// submission), in the order of (due time, sequence number), and waits for
// every goroutine to be idle before it takes the next one; its random
// choices come from one generator seeded by the seed. So one seed runs the
// same events in the same order every time (see docs/testing.md for what
// the Go scheduler still decides).
type World struct {
	seed  uint64
	rng   *rand.Rand
	cfg   config
	start time.Time

	queue eventQueue
	seq   uint64
	net   *network
	tcp   *tcpNet // a netty seed's network (nettyapp.go), else nil
	trace *trace
	stats *Stats
	app   *app

	wakeCh chan struct{}

	// The loop's own records, for the invariants.
	idles     uint64         // idle points so far
	asks      []askSent      // asks seen, oldest first
	delivered map[string]int // messages delivered to the driver's scheduler, by type
	launched  map[int64]bool // tasks whose LaunchTask was delivered
	cores     coreLedger     // the cores of the tasks launched on each executor
	raceWhat  string         // armRace's
	raceFn    func()
	racing    atomic.Bool // an armed race's step runs, its driver lock not yet released

	// mu guards what goroutines other than the loop's record.
	mu       sync.Mutex
	requests []request // run by the loop after the next idle point
	failures []string
	done     bool    // the application has stopped
	bursts   []burst // task failure bursts so far
	draining atomic.Bool

	launchBursts []burst  // windows of container launch failures so far, under mu
	cleanup      []func() // run when the seed's run ends
}

// event is one entry of the world's queue.
type event struct {
	at    time.Time
	seq   uint64
	what  string
	apply func()
	env   *envelope // for a delivery
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// newWorld returns the world of seed; call it inside a synctest bubble.
func newWorld(seed uint64) *World {
	w := &World{seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), start: time.Now(),
		wakeCh: make(chan struct{}, 1), stats: NewStats(), delivered: make(map[string]int), launched: make(map[int64]bool)}
	w.trace = newTrace(w)
	w.net = newNetwork(w)
	w.cfg = drawConfig(w.rng)
	w.cfg.yarn = drawYarn(seed, &w.cfg)
	if w.cfg.yarn == nil {
		// A seed runs on netty or the YARN-shaped cluster, not both.
		w.setupNetty()
	}
	return w
}

// now is the virtual time since the world started.
func (w *World) now() time.Duration { return time.Since(w.start) }

// at schedules apply after d (rounded so that two events rarely share an
// instant: the world's own events fall between the round instants that
// the code under test's timers use).
func (w *World) at(d time.Duration, what string, apply func()) {
	w.seq++
	heap.Push(&w.queue, &event{at: time.Now().Add(d), seq: w.seq, what: what, apply: apply})
}

// jitter is a random duration in [lo, hi) with a nanosecond part.
func (w *World) jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)))
}

// wake tells the loop that something was sent; safe from any goroutine.
func (w *World) wake() {
	select {
	case w.wakeCh <- struct{}{}:
	default:
	}
}

// request is a function another goroutine has the loop run.
type request struct {
	key string
	fn  func()
}

// request runs fn on the loop at its next idle point; safe from any
// goroutine. The requests made between two idle points run in the order
// of their keys, not in the order goroutines happened to make them.
func (w *World) request(key string, fn func()) {
	w.mu.Lock()
	w.requests = append(w.requests, request{key, fn})
	w.mu.Unlock()
	w.wake()
}

// armRace makes fn run right after the next task's end reaches the
// driver, in the same step, without waiting for what that delivery woke:
// the driver's handling of the update (launches of more tasks, say) and
// fn race, and the Go scheduler, not the seed, orders what they do. It is
// the one place where the simulator lets goroutines of the code under
// test run against each other on purpose (see docs/testing.md).
func (w *World) armRace(what string, fn func()) {
	w.raceWhat, w.raceFn = what, fn
}

// raceAfter runs the armed race after e's delivery, if e ends a task.
func (w *World) raceAfter(e *envelope) {
	u, ok := e.msg.(*messages.StatusUpdate)
	if !ok || w.raceFn == nil || u.GetState() == messages.TaskState_TASK_STATE_RUNNING {
		return
	}
	fn := w.raceFn
	w.raceFn = nil
	w.stats.races++
	if w.trace.raced == "" {
		w.trace.raced = w.trace.Hash()
	}
	w.trace.add("race: %s at once", w.raceWhat)
	w.racing.Store(true)
	// Let the goroutines the delivery woke run a little first: how far
	// they get before fn runs is the race's own (a seeded number of
	// yields, the Go scheduler the rest).
	for range w.rng.IntN(4) {
		runtime.Gosched()
	}
	fn()
}

// driverLockReleased is the driver's lock release hook
// (endpoints.WithLockRelease). At the first release in an armed race's
// step, the goroutine that released the lock (the driver's endpoint,
// between its scheduling step and the sending of its launches, or the
// cancelled job's) yields and then stays busy for a while, as one that the
// Go scheduler preempted would: a goroutine waiting for the lock (the
// other of the two) may then take it and go on between two steps of the
// first. Later releases, and releases outside races, do nothing.
func (w *World) driverLockReleased() {
	if w.racing.CompareAndSwap(true, false) {
		preempted()
	}
}

// turn blocks the calling goroutine until the loop lets it go on, in a
// step of its own: goroutines woken together (the tasks an executor's
// stop cancels) go on one at a time, in the order of their keys.
func (w *World) turn(key string) {
	ch := make(chan struct{})
	w.request(key, func() {
		w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { close(ch) })
	})
	<-ch
}

// takeRequests returns the requests made since the last call, sorted.
func (w *World) takeRequests() []request {
	w.mu.Lock()
	reqs := w.requests
	w.requests = nil
	w.mu.Unlock()
	slices.SortStableFunc(reqs, func(a, b request) int { return strings.Compare(a.key, b.key) })
	return reqs
}

// fail records a broken invariant; safe from any goroutine.
func (w *World) fail(format string, args ...any) {
	if w.draining.Load() {
		return // what a failed run's teardown breaks is no news
	}
	msg := fmt.Sprintf("t=%s ", fmtDur(w.now())) + fmt.Sprintf(format, args...)
	w.mu.Lock()
	first := len(w.failures) == 0
	w.failures = append(w.failures, msg)
	w.mu.Unlock()
	if first {
		w.trace.markFailure()
	}
}

func (w *World) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.failures) > 0
}

// run is the world's loop: it returns when the application has stopped and
// nothing is left in flight, or when the virtual clock reaches the bound.
func (w *World) run() {
	deadline := w.start.Add(w.cfg.bound)
	for {
		synctest.Wait()
		w.idlePoint()
		w.mu.Lock()
		done := w.done
		w.mu.Unlock()
		if done && w.queue.Len() == 0 {
			return
		}
		if !time.Now().Before(deadline) {
			w.fail("hang: the application has not ended after %s of virtual time", fmtDur(w.cfg.bound))
			w.trace.add("hang: %s", w.app.describeHang())
			return
		}
		if w.queue.Len() == 0 || w.queue[0].at.After(time.Now()) {
			until := deadline
			if w.queue.Len() > 0 && w.queue[0].at.Before(until) {
				until = w.queue[0].at
			}
			t := time.NewTimer(time.Until(until))
			select {
			case <-t.C:
			case <-w.wakeCh:
			}
			t.Stop()
			continue
		}
		if w.failed() {
			return
		}
		ev := w.popEvent()
		w.stats.steps++
		if ev.what != "" {
			w.trace.add("%s", ev.what)
		}
		ev.apply()
	}
}

// idlePoint runs once every goroutine is blocked: it schedules what was
// sent, runs the requests of other goroutines, and checks the invariants
// that hold after every step.
func (w *World) idlePoint() {
	w.racing.Store(false)
	for {
		// What netty seeds' envs sent and delivered is seen first: the
		// requests (a job's end) check what was delivered.
		written := w.tcpIdle(false)
		reqs := w.runRequests()
		sent := w.net.takePending()
		for _, e := range sent {
			w.schedule(e)
		}
		if len(reqs) == 0 && len(sent) == 0 && !written {
			break
		}
		synctest.Wait()
	}
	w.checkStep()
}

// runRequests runs the requests made since the last idle point and, if
// there were any, waits until what they started is idle (the application's
// stop, say, sends to every executor): the batch of sent messages the loop
// takes next is then all that the step and the requests sent, not what the
// goroutines they started happened to send by the time the loop took it.
func (w *World) runRequests() []request {
	reqs := w.takeRequests()
	for _, r := range reqs {
		r.fn()
	}
	if len(reqs) > 0 {
		synctest.Wait()
	}
	return reqs
}

// idlePointQuiet is idlePoint without the invariants, while a failed run
// stops.
func (w *World) idlePointQuiet() {
	w.runRequests()
	for _, e := range w.net.takePending() {
		w.schedule(e)
	}
	w.tcpIdle(true)
	w.trace.flush()
}

func (w *World) popEvent() *event { return heap.Pop(&w.queue).(*event) }

// dueAfter returns when something sent now on a connection whose last
// delivery is due at *last arrives after delay d: never before nor with
// that one. It moves *last to the time returned.
func dueAfter(last *time.Time, d time.Duration) time.Time {
	due := time.Now().Add(d)
	if !due.After(*last) {
		due = last.Add(time.Nanosecond)
	}
	*last = due
	return due
}

// schedule puts e on its connection, due after a delay drawn from the
// seed, never before the connection's previous envelope.
func (w *World) schedule(e *envelope) {
	e.desc = describe(e, w.trace.dir)
	w.stats.sent++
	w.observeSend(e)
	d := w.net.delay(e)
	n := w.net
	n.mu.Lock()
	due := dueAfter(&n.connLocked(e.from, e.to).lastDue, d)
	n.mu.Unlock()
	w.seq++
	heap.Push(&w.queue, &event{at: due, seq: w.seq, apply: func() { n.deliver(e) }, env: e})
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.6fs", d.Seconds())
}
