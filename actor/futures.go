// The registry of pending asks, sharded by id, and the ids replies are routed by.

package actor

import (
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The env's own registry of pending asks. Every ask is tracked here instead
// of in protoactor's process registry (which hashes each id with murmur into
// a concurrent map) and without a timer of its own at first:
//
//   - A remote ask gets a random 64-bit id, and its reply-to PID the id
//     futureIDPrefix and the id in 13 base-32 digits: a peer cannot guess the id of an ask made
//     to another peer. Replies are routed back by parsing that id and
//     looking the future up in a sharded map (TransportHost.LookupReply,
//     Undeliverable), which also checks that the reply comes from the peer
//     the ask went to. Asks are numbered in sequence besides (Future.seq,
//     for PendingAsks). The map also answers "every ask
//     pending on a peer" when its connection closes, and "every ask" at
//     Shutdown.
//   - Timeouts and context watches are armed lazily: an ask is queued as
//     "young"; a sweeper goroutine, ticking every sweepInterval while asks
//     are being made, takes the young asks at each tick and, at the next
//     tick, arms the timer (and the context watch) of each one still
//     pending. Most asks complete well within a tick and never create a
//     timer, nor read the clock. The timer fires at T+timeout, where T is
//     the tick that took the ask: never before the ask's deadline, and at
//     most one tick after it. An ask whose timeout is too short to wait for
//     the sweeper is armed at once. A cancelled context fails Result and
//     Wait at once (they watch it themselves); Done is closed at the latest
//     when the watch is armed.

// futureIDPrefix starts the id of the reply-to PID of every remote ask.
// "future$" is what transports recognise as a reply target; the '.' never
// appears in protoactor's own future ids ("future$" + base-64 digits), so
// the two cannot collide.
const futureIDPrefix = "future$."

const (
	futureShards = 32
	// sweepInterval is the sweeper's tick.
	sweepInterval = 5 * time.Millisecond
	// lazyArmMin is the shortest timeout that waits for the sweeper: an ask
	// is armed between one and two ticks after it started, well before
	// such a deadline.
	lazyArmMin = 4 * sweepInterval
)

type futureShard struct {
	mu    sync.Mutex
	m     map[uint64]*Future
	young []*Future
	_     [64]byte // keep shards on their own cache lines
}

// futureRegistry holds an env's pending asks.
type futureRegistry struct {
	seq      atomic.Uint64
	refusing atomic.Bool // failAll has begun: no new ask is taken
	shards   [futureShards]futureShard

	started bool
	closed  atomic.Bool // the sweeper stopped (or never started): arm at once
	idle    atomic.Bool // the sweeper waits for wake
	wake    chan struct{}
	stop    chan struct{}
	exited  chan struct{}
}

func newFutureRegistry() *futureRegistry {
	r := &futureRegistry{
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	r.closed.Store(true)
	for i := range r.shards {
		r.shards[i].m = make(map[uint64]*Future)
	}
	return r
}

// start starts the sweeper; until then every ask is armed at once.
func (r *futureRegistry) start() {
	r.started = true
	r.closed.Store(false)
	go r.sweep()
}

// futureIDDigits is the number of base-32 digits of a remote ask's id:
// every id is written with all 13 (5 bits each), so that writing and
// parsing one are shifts, not divisions.
const futureIDDigits = 13

// futureIDLen is the length of the PID id of a remote ask: the prefix and
// a uint64 in 13 base-32 digits.
const futureIDLen = len(futureIDPrefix) + futureIDDigits

// futureIDAlphabet holds the base-32 digits, in order.
const futureIDAlphabet = "0123456789abcdefghijklmnopqrstuv"

// futureID returns the PID id of the remote ask id.
func futureID(id uint64) string {
	var b [futureIDLen]byte
	return string(appendFutureID(b[:0], id))
}

// appendFutureID appends the PID id of the remote ask id to b.
func appendFutureID(b []byte, id uint64) []byte {
	b = append(b, futureIDPrefix...)
	var d [futureIDDigits]byte
	for i := futureIDDigits - 1; i >= 0; i-- {
		d[i] = futureIDAlphabet[id&31]
		id >>= 5
	}
	return append(b, d[:]...)
}

// parseFutureID returns the numeric id of a PID id made by futureID.
func parseFutureID[S string | []byte](s S) (uint64, bool) {
	if len(s) != futureIDLen || string(s[:len(futureIDPrefix)]) != futureIDPrefix {
		return 0, false
	}
	digits := s[len(futureIDPrefix):]
	var id uint64
	for i := range futureIDDigits {
		c := digits[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'v':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		if id>>59 != 0 {
			return 0, false // past 64 bits: 13 digits hold 65
		}
		id = id<<5 | uint64(d)
	}
	return id, true
}

// isFutureID reports whether id is the id of a reply target (sparkrpc's or
// protoactor's).
func isFutureID(id string) bool { return strings.HasPrefix(id, "future$") }

// add registers the ask f (local or remote) under a new random id, and
// queues it for arming. It returns false, and registers nothing, once
// failAll has begun.
func (r *futureRegistry) add(f *Future) (uint64, bool) {
	seq := r.seq.Add(1)
	var id uint64
	var s *futureShard
	for {
		// math/rand/v2's generator is seeded from the system's randomness
		// for each thread and allocates nothing.
		if id = rand.Uint64(); id == 0 {
			continue
		}
		s = &r.shards[id%futureShards]
		s.mu.Lock()
		if r.refusing.Load() {
			s.mu.Unlock()
			return 0, false
		}
		if _, taken := s.m[id]; !taken {
			break
		}
		s.mu.Unlock()
	}
	f.id, f.seq = id, seq
	s.m[id] = f
	armNow := r.queueLocked(s, f)
	s.mu.Unlock()
	r.afterQueue(f, armNow)
	return id, true
}

// failAll refuses every later ask and completes every pending one with err.
func (r *futureRegistry) failAll(err error) {
	// An add that takes its shard's lock after the sweep below has passed
	// it sees refusing; one that took it before is in the map.
	r.refusing.Store(true)
	for _, f := range r.pending(func(*Future) bool { return true }) {
		f.complete(nil, err)
	}
}

// queueLocked queues f as young and returns false, or returns true when f
// must be armed at once (the sweeper has stopped, or its timeout is short).
// An ask with neither a timeout nor a context to watch needs no arming.
func (r *futureRegistry) queueLocked(s *futureShard, f *Future) (armNow bool) {
	if f.ctx == nil && f.timeout.infinite() {
		return false
	}
	if r.closed.Load() || (!f.timeout.infinite() && f.timeout.Duration < lazyArmMin) {
		return true
	}
	s.young = append(s.young, f)
	f.queued = true
	return false
}

func (r *futureRegistry) afterQueue(f *Future, armNow bool) {
	if armNow {
		f.arm(time.Time{})
		return
	}
	if f.queued && r.idle.Load() && r.idle.CompareAndSwap(true, false) {
		r.wake <- struct{}{}
	}
}

// lookup returns the pending ask id.
func (r *futureRegistry) lookup(id uint64) *Future {
	s := &r.shards[id%futureShards]
	s.mu.Lock()
	f := s.m[id]
	s.mu.Unlock()
	return f
}

// remove forgets the ask id.
func (r *futureRegistry) remove(id uint64) {
	s := &r.shards[id%futureShards]
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

// pending returns the pending asks for which keep is true.
func (r *futureRegistry) pending(keep func(*Future) bool) []*Future {
	var out []*Future
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for _, f := range s.m {
			if keep(f) {
				out = append(out, f)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// takeYoung moves every young list into dst.
func (r *futureRegistry) takeYoung(dst []*Future) []*Future {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		dst = append(dst, s.young...)
		clear(s.young)
		s.young = s.young[:0]
		s.mu.Unlock()
	}
	return dst
}

func (r *futureRegistry) anyYoung() bool {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		n := len(s.young)
		s.mu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// sweep arms the asks that outlive a tick; it idles while no ask is made.
func (r *futureRegistry) sweep() {
	defer close(r.exited)
	ticker := time.NewTicker(sweepInterval)
	defer ticker.Stop()
	var prev, cur []*Future // prev: the asks taken at the tick at prevTime
	var prevTime time.Time
	for {
		select {
		case <-ticker.C:
		case <-r.stop:
			r.closed.Store(true)
			armAll(prev, prevTime)
			armAll(r.takeYoung(nil), time.Now())
			return
		}
		// The previous generation was taken a tick ago.
		armAll(prev, prevTime)
		clear(prev)
		prev, cur = r.takeYoung(cur[:0]), prev[:0]
		prevTime = time.Now() // after every ask taken was made
		if len(prev) > 0 {
			continue
		}
		// Nothing new: idle until the next ask.
		r.idle.Store(true)
		if r.anyYoung() {
			if !r.idle.CompareAndSwap(true, false) {
				<-r.wake // the asker that cleared it sends one
			}
			continue
		}
		ticker.Stop()
		select {
		case <-r.wake:
		case <-r.stop:
			r.closed.Store(true)
			armAll(r.takeYoung(nil), time.Now())
			return
		}
		ticker.Reset(sweepInterval)
	}
}

// armAll arms the pending asks of fs, all made before since.
func armAll(fs []*Future, since time.Time) {
	for _, f := range fs {
		if f.state.Load() == 0 {
			f.arm(since)
		}
	}
}

// close stops the sweeper after arming every ask it holds; asks made later
// are armed at once.
func (r *futureRegistry) close() {
	if !r.started {
		return
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.exited
}
