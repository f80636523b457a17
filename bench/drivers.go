package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// sink is what receivers consult for the current run: the tally of arrivals
// and one checker per receiver. A new run installs a new state.
type sink struct {
	state atomic.Pointer[runState]
}

type runState struct {
	// mu guards checker 0 in asking workloads: a remote reply reaches the
	// asker through the kernel, which gives no happens-before edge between
	// the replier's check and the harness's final read.
	mu       sync.Mutex
	tally    *tally
	checkers []*checker
	// deadline ends a duration-bound ping-pong run.
	deadline time.Time
	// pairs counts ping-pong pairs that finished.
	pairsDone atomic.Int64
	pairs     int64
	rounds    uint64 // ping-pong rounds per pair in count mode; 0 = until stop
	allDone   chan struct{}
	doneOnce  sync.Once
}

// arrive records a one-way message at receiver r.
func (s *sink) arrive(r int, m *messages.BenchPing) {
	st := s.state.Load()
	st.checkers[r].check(m.Sender, m.Seq&^fenceBit)
	if m.Seq&fenceBit != 0 {
		st.tally.fenced()
	}
	st.tally.arrived()
}

// fenceBit marks the sequence number of a one-way sender's fence, its
// last message (see sendAll).
const fenceBit = uint64(1) << 62

// split divides a total over n senders.
func split(total int64, n, i int) int64 {
	q := total / int64(n)
	if int64(i) < total%int64(n) {
		q++
	}
	return q
}

// newPing builds the i-th message of a sender.
func newPing(sender int, seq uint64, payload []byte) *messages.BenchPing {
	return &messages.BenchPing{Sender: int32(sender), Seq: seq, Payload: payload}
}

// onewaySpec describes a one-way workload: senders goroutines, each sending
// to the receiver route(sender); receivers call sink.arrive.
type onewaySpec struct {
	senders   int
	receivers int
	route     func(sender int) int
	window    int
	payload   []byte
	sink      *sink
	// send sends one message from a sender.
	send func(sender int, m *messages.BenchPing) error
	// flush is called by a sender before it waits for the window and at its
	// end (for buffered transports); may be nil.
	flush func(sender int) error
	// stop ends a run without a count when it is set, before its duration
	// (the flood under the asks of the head-of-line scenario); may be nil.
	stop *atomic.Bool
}

// onewayRunner builds the run function of the one-way workload of p:
// senders goroutines, sender s sending to receiver s % receivers with send
// (and flush, for a buffered transport; may be nil), within the window for
// p's payload size. Every driver's one-way scenario runs through it.
func onewayRunner(h *harness, p Params, sk *sink, senders, receivers int, send func(sender int, m *messages.BenchPing) error, flush func(sender int) error) runFunc {
	spec := onewaySpec{
		senders:   senders,
		receivers: receivers,
		route:     func(s int) int { return s % receivers },
		window:    h.cfg.window(p.Payload),
		payload:   make([]byte, p.Payload),
		sink:      sk,
		send:      send,
		flush:     flush,
	}
	return func(ctx context.Context, b budget) (sample, error) {
		return h.runOneway(ctx, spec, b)
	}
}

// askRunner builds the run function of the asking workload of p: InFlight
// workers (at least one), each asking with ask and waiting for the reply.
func askRunner(h *harness, p Params, sk *sink, ask func(context.Context, int, *messages.BenchPing) (*messages.BenchPong, error)) runFunc {
	workers := max(1, p.InFlight)
	spec := askSpec{
		workers: workers,
		payload: make([]byte, p.Payload),
		sink:    sk,
		ask:     ask,
		hists:   newHistograms(workers),
	}
	return func(ctx context.Context, b budget) (sample, error) {
		return h.runAsk(ctx, spec, b)
	}
}

// pingPongRunner builds the run function of a ping-pong workload.
func pingPongRunner(h *harness, spec *pingPongSpec) runFunc {
	return func(ctx context.Context, b budget) (sample, error) {
		return h.runPingPong(ctx, spec, b)
	}
}

// runOneway runs a one-way workload within b and verifies every arrival.
func (h *harness) runOneway(ctx context.Context, spec onewaySpec, b budget) (sample, error) {
	st := &runState{tally: newTally(spec.window)}
	st.checkers = make([]*checker, spec.receivers)
	for r := range st.checkers {
		st.checkers[r] = newChecker(spec.senders, true)
	}
	spec.sink.state.Store(st)

	stall := h.cfg.StallTimeout
	sent := make([]int64, spec.senders)
	errs := make([]error, spec.senders)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(b.duration)
	for s := 0; s < spec.senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit := int64(-1)
			if b.count > 0 {
				limit = split(b.count, spec.senders, s)
			}
			sent[s], errs[s] = spec.sendAll(ctx, st, s, limit, deadline, stall)
		}()
	}
	wg.Wait()
	var total int64
	for _, n := range sent {
		total += n
	}
	// Each sender's fence follows its messages (see sendAll).
	awaitErr := st.tally.awaitFences(ctx, int32(spec.senders), stall)
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return sample{}, err
	}
	v := spec.verification(st, sent)
	v.Sent -= int64(spec.senders)
	v.Received = max(0, v.Received-int64(spec.senders))
	if awaitErr != nil && v.OK {
		return sample{}, awaitErr
	}
	return sample{messages: total, elapsed: elapsed, verified: v}, nil
}

// sendAll is sender s of a one-way run: it sends limit messages (limit < 0:
// until the deadline or spec.stop), each when it fits in the window, and
// flushes at the end. It returns how many messages it sent and the error
// that ended it early, if any.
//
// Its last message is a fence: one more of its sequence, marked with
// fenceBit, sent when the run's are, not counted among them. The
// receiver's checker sees it in order like the others, and the run waits
// for every sender's fence rather than for a count of arrivals, so that
// it reads the checkers once each stream has delivered everything before
// its fence: a duplicate (of the last message, say) is then counted, not
// missed, and a duplicate that made the count early no longer lets the
// harness read a checker that a receiver still writes.
func (spec *onewaySpec) sendAll(ctx context.Context, st *runState, s int, limit int64, deadline time.Time, stall time.Duration) (int64, error) {
	var seq uint64
	var seen int64 // the arrivals this sender read last
	for ; ; seq++ {
		fence := limit >= 0 && int64(seq) >= limit ||
			limit < 0 && seq%64 == 0 && (time.Now().After(deadline) || spec.stop != nil && spec.stop.Load())
		n := st.tally.sent.Add(1)
		if n-seen > st.tally.window {
			// Arrivals only grow: they are read again only when
			// the count read last says that the window is full.
			seen = st.tally.received.Load()
		}
		if n-seen > st.tally.window {
			// The window is full: flush buffered writes, then wait.
			if spec.flush != nil {
				if err := spec.flush(s); err != nil {
					st.tally.unsend()
					return int64(seq), err
				}
			}
			if err := st.tally.waitWindow(ctx, n, stall); err != nil {
				st.tally.unsend()
				return int64(seq), err
			}
		}
		m := newPing(s, seq, spec.payload)
		if fence {
			m.Seq |= fenceBit
		}
		if err := spec.send(s, m); err != nil {
			st.tally.unsend()
			return int64(seq), err
		}
		if fence {
			break
		}
	}
	if spec.flush != nil {
		return int64(seq), spec.flush(s)
	}
	return int64(seq), nil
}

// verification checks the arrivals of a one-way run at every receiver
// against what the senders sent.
func (spec *onewaySpec) verification(st *runState, sent []int64) Verification {
	perReceiver := make([]int64, spec.receivers)
	for s, n := range sent {
		perReceiver[spec.route(s)] += n + 1 // and its fence
	}
	var vs []Verification
	for r, c := range st.checkers {
		vs = append(vs, c.verification(perReceiver[r]))
	}
	return mergeVerifications(vs...)
}

// askSpec describes an asking workload: workers goroutines, each with one ask
// in flight at a time, to one replier that checks requests with checker 0 of
// the sink and replies with a BenchPong echoing sender and seq.
type askSpec struct {
	workers int
	payload []byte
	sink    *sink
	// ask sends m and waits for the reply.
	ask func(ctx context.Context, worker int, m *messages.BenchPing) (*messages.BenchPong, error)
	// hists are one histogram per worker, allocated before measuring.
	hists []*histogram
}

func newHistograms(n int) []*histogram {
	hs := make([]*histogram, n)
	for i := range hs {
		hs[i] = newHistogram()
	}
	return hs
}

// reply is what a replier does with a request: check it and build the pong.
func (s *sink) reply(m *messages.BenchPing) *messages.BenchPong {
	st := s.state.Load()
	st.mu.Lock()
	st.checkers[0].check(m.Sender, m.Seq)
	st.mu.Unlock()
	return &messages.BenchPong{Sender: m.Sender, Seq: m.Seq}
}

// runAsk runs an asking workload within b, recording each ask's latency.
func (h *harness) runAsk(ctx context.Context, spec askSpec, b budget) (sample, error) {
	st := &runState{tally: newTally(0), checkers: []*checker{newChecker(spec.workers, true)}}
	spec.sink.state.Store(st)
	for _, hist := range spec.hists {
		hist.reset()
	}
	sent := make([]int64, spec.workers)
	replies := make([]int64, spec.workers)
	mismatched := make([]int64, spec.workers)
	errs := make([]error, spec.workers)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(b.duration)
	for w := 0; w < spec.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hist := spec.hists[w]
			limit := int64(-1)
			if b.count > 0 {
				limit = split(b.count, spec.workers, w)
			}
			for seq := uint64(0); limit < 0 || int64(seq) < limit; seq++ {
				t0 := time.Now()
				if limit < 0 && t0.After(deadline) {
					break
				}
				sent[w]++
				pong, err := spec.ask(ctx, w, newPing(w, seq, spec.payload))
				if err != nil {
					errs[w] = fmt.Errorf("ask %d of sender %d: %w", seq, w, err)
					return
				}
				hist.record(time.Since(t0))
				replies[w]++
				if pong.GetSender() != int32(w) || pong.GetSeq() != seq {
					mismatched[w]++
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return sample{}, err
	}
	var total, got, bad int64
	for w := range sent {
		total += sent[w]
		got += replies[w]
		bad += mismatched[w]
	}
	st.mu.Lock()
	v := st.checkers[0].verification(total)
	st.mu.Unlock()
	if got < total {
		v.Lost = max(v.Lost, total-got)
	}
	v.Unknown += bad
	v.OK = v.OK && bad == 0 && got == total
	merged := spec.hists[0]
	for _, hist := range spec.hists[1:] {
		merged.merge(hist)
	}
	return sample{messages: total, elapsed: elapsed, verified: v, hist: merged}, nil
}

// pingPongSpec describes the many-endpoints workload: 2*pairs endpoints,
// endpoint 2i (A) and 2i+1 (B) form a pair. The harness sends seq 0 to each B;
// B answers each ping to A with the same seq; A sends the next seq to B until
// the run ends. Receivers call sink.pingPong.
type pingPongSpec struct {
	pairs   int
	payload []byte
	sink    *sink
	// send delivers m to endpoint to; from is the sending endpoint, or -1
	// for the harness.
	send func(from, to int, m *messages.BenchPing) error
}

// pingPong handles a message that arrived at endpoint idx.
func (s *sink) pingPong(spec *pingPongSpec, idx int, m *messages.BenchPing) {
	st := s.state.Load()
	st.checkers[idx].check(0, m.Seq)
	st.tally.arrived()
	var err error
	if idx%2 == 1 { // B: answer A
		st.tally.sent.Add(1)
		err = spec.send(idx, idx-1, newPing(0, m.Seq, spec.payload))
	} else { // A: next round, or done
		next := m.Seq + 1
		var more bool
		if st.rounds > 0 {
			more = next < st.rounds
		} else {
			// Each pair watches the clock itself: a ping-pong pair of
			// goroutines can keep the harness's own goroutine from running
			// for seconds (Go's runnext), so a stop flag set by the harness
			// would come late.
			more = next%16 != 0 || time.Now().Before(st.deadline)
		}
		if more {
			st.tally.sent.Add(1)
			err = spec.send(idx, idx+1, newPing(0, next, spec.payload))
		} else if st.pairsDone.Add(1) == st.pairs {
			st.doneOnce.Do(func() { close(st.allDone) })
		}
	}
	if err != nil {
		st.tally.unsend()
	}
}

// runPingPong runs the many-endpoints workload within b.
func (h *harness) runPingPong(ctx context.Context, spec *pingPongSpec, b budget) (sample, error) {
	st := &runState{
		tally:   newTally(0),
		pairs:   int64(spec.pairs),
		allDone: make(chan struct{}),
	}
	if b.count > 0 {
		st.rounds = uint64(max(1, (b.count+int64(2*spec.pairs)-1)/int64(2*spec.pairs)))
	}
	st.checkers = make([]*checker, 2*spec.pairs)
	for i := range st.checkers {
		st.checkers[i] = newChecker(1, true)
	}
	start := time.Now()
	st.deadline = start.Add(b.duration)
	spec.sink.state.Store(st)
	for p := 0; p < spec.pairs; p++ {
		st.tally.sent.Add(1)
		if err := spec.send(-1, 2*p+1, newPing(0, 0, spec.payload)); err != nil {
			return sample{}, fmt.Errorf("start pair %d: %w", p, err)
		}
	}
	// Wait for every pair to finish, bounded by progress.
	stall := h.cfg.StallTimeout
	last := st.tally.received.Load()
	deadline := time.Now().Add(stall)
	ticker := time.NewTicker(stall / 10)
	defer ticker.Stop()
wait:
	for {
		select {
		case <-st.allDone:
			break wait
		case <-ctx.Done():
			return sample{}, ctx.Err()
		case <-ticker.C:
			r := st.tally.received.Load()
			if r != last {
				last, deadline = r, time.Now().Add(stall)
			} else if time.Now().After(deadline) {
				break wait
			}
		}
	}
	total := st.tally.sent.Load()
	awaitErr := st.tally.await(ctx, total, stall)
	elapsed := time.Since(start)
	// Each endpoint received the seqs 0..n-1 of its partner in order; what
	// it should have received is what its partner sent.
	var vs []Verification
	for p := 0; p < spec.pairs; p++ {
		a, bb := st.checkers[2*p], st.checkers[2*p+1]
		// B received A's pings (its own count is what A sent); A received
		// one pong per ping B got.
		vs = append(vs, bb.verification(int64(bb.next[0])), a.verification(bb.received-bb.duplicates))
	}
	v := mergeVerifications(vs...)
	v.Sent = total
	if v.Received != total {
		v.Lost = max(v.Lost, total-v.Received)
		v.OK = false
	}
	if awaitErr != nil && v.OK {
		return sample{}, awaitErr
	}
	return sample{messages: total, elapsed: elapsed, verified: v}, nil
}
