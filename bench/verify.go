package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// checker verifies what a receiver got: every (sender, seq) exactly once and,
// when ordered is set, each sender's numbers in increasing order with no gap.
// A checker belongs to one serial receiver (an endpoint or actor processes its
// messages one at a time), so it needs no lock; the harness reads it only
// after the tally says everything arrived.
type checker struct {
	ordered    bool
	seen       [][]uint64 // per sender: bitmap of the sequence numbers received
	next       []uint64   // per sender: the next sequence number expected
	received   int64
	duplicates int64
	reordered  int64
	bad        int64 // messages from an unknown sender
}

func newChecker(senders int, ordered bool) *checker {
	return &checker{
		ordered: ordered,
		seen:    make([][]uint64, senders),
		next:    make([]uint64, senders),
	}
}

// check records the arrival of (sender, seq).
func (c *checker) check(sender int32, seq uint64) {
	c.received++
	if sender < 0 || int(sender) >= len(c.seen) {
		c.bad++
		return
	}
	words := c.seen[sender]
	w := seq / 64
	if w >= uint64(len(words)) {
		n := uint64(2 * len(words))
		if n <= w {
			n = w + 1
		}
		if n < 64 {
			n = 64
		}
		grown := make([]uint64, n)
		copy(grown, words)
		words = grown
		c.seen[sender] = words
	}
	bit := uint64(1) << (seq % 64)
	if words[w]&bit != 0 {
		c.duplicates++
		return
	}
	words[w] |= bit
	if c.ordered && seq != c.next[sender] {
		c.reordered++
	}
	if seq >= c.next[sender] {
		c.next[sender] = seq + 1
	}
}

// verification compares what was received with what was sent.
func (c *checker) verification(sent int64) Verification {
	v := Verification{
		Sent:       sent,
		Received:   c.received,
		Duplicates: c.duplicates,
		Reordered:  c.reordered,
		Unknown:    c.bad,
		Ordered:    c.ordered,
	}
	distinct := c.received - c.duplicates - c.bad
	if distinct < sent {
		v.Lost = sent - distinct
	}
	v.OK = v.Lost == 0 && v.Duplicates == 0 && v.Reordered == 0 && v.Unknown == 0 && distinct == sent
	return v
}

// mergeVerifications adds up the verifications of several receivers.
func mergeVerifications(vs ...Verification) Verification {
	var out Verification
	out.OK = true
	for _, v := range vs {
		out.Sent += v.Sent
		out.Received += v.Received
		out.Lost += v.Lost
		out.Duplicates += v.Duplicates
		out.Reordered += v.Reordered
		out.Unknown += v.Unknown
		out.Ordered = out.Ordered || v.Ordered
		out.OK = out.OK && v.OK
	}
	return out
}

// tally counts arrivals for a run, signals when the expected number has
// arrived, and bounds the number of one-way messages in flight (the window)
// so that a sender faster than its receiver cannot queue without limit.
//
// The receivers write received at every arrival and the senders write sent
// at every send, so each count has a cache line of its own, and the fields
// read at every arrival share a third that is seldom written: on one line,
// every message moved it between the processors of its sender and its
// receiver, a cost the harness added to every implementation it measures.
// A sender reads received only when the count it read last says the window
// is full (see runOneway).
type tally struct {
	received    atomic.Int64
	_           [56]byte
	sent        atomic.Int64
	_           [56]byte
	target      atomic.Int64
	fences      atomic.Int32 // senders' fences arrived (see sendAll)
	fenceTarget atomic.Int32
	window      int64
	waiting     atomic.Int32
	wake        chan struct{}
	done        chan struct{}
	doneOnce    sync.Once
}

func newTally(window int) *tally {
	t := &tally{
		window: int64(window),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	if t.window <= 0 {
		t.window = 1 << 62
	}
	t.target.Store(1 << 62)
	t.fenceTarget.Store(1<<31 - 1)
	return t
}

// fenced counts the arrival of a sender's fence, before arrived counts it
// as a message.
func (t *tally) fenced() {
	if t.fences.Add(1) >= t.fenceTarget.Load() {
		t.doneOnce.Do(func() { close(t.done) })
	}
}

// awaitFences waits until the fences of n senders have arrived, and so
// everything their streams delivered before them. It gives up as await
// does.
func (t *tally) awaitFences(ctx context.Context, n int32, stall time.Duration) error {
	t.fenceTarget.Store(n)
	if t.fences.Load() >= n {
		t.doneOnce.Do(func() { close(t.done) })
	}
	return t.wait(ctx, stall, func(r int64) string {
		return fmt.Sprintf("%d of %d senders' last messages arrived", t.fences.Load(), n)
	})
}

// arrived counts one arrival.
func (t *tally) arrived() {
	n := t.received.Add(1)
	if n >= t.target.Load() {
		t.doneOnce.Do(func() { close(t.done) })
	}
	if t.waiting.Load() != 0 && t.sent.Load()-n <= t.window/2 {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// waitWindow waits until the message numbered s fits in the window. It
// returns an error when ctx ends or nothing arrives for stall.
func (t *tally) waitWindow(ctx context.Context, s int64, stall time.Duration) error {
	last := t.received.Load()
	deadline := time.Now().Add(stall)
	timer := time.NewTimer(time.Millisecond)
	defer timer.Stop()
	for {
		t.waiting.Add(1)
		r := t.received.Load()
		if s-r <= t.window {
			t.waiting.Add(-1)
			// Pass a wake-up on to any other waiting sender.
			select {
			case t.wake <- struct{}{}:
			default:
			}
			return nil
		}
		if r != last {
			last = r
			deadline = time.Now().Add(stall)
		} else if time.Now().After(deadline) {
			t.waiting.Add(-1)
			return fmt.Errorf("%w: no message arrived for %v with %d in flight", ErrStalled, stall, s-r)
		}
		timer.Reset(time.Millisecond)
		select {
		case <-t.wake:
		case <-timer.C:
		case <-ctx.Done():
			t.waiting.Add(-1)
			return ctx.Err()
		}
		t.waiting.Add(-1)
	}
}

// unsend takes back a message counted by acquire that was not sent.
func (t *tally) unsend() { t.sent.Add(-1) }

// await waits until n messages have arrived. It gives up when ctx ends or when
// nothing arrives for stall; the checker then reports what was lost.
func (t *tally) await(ctx context.Context, n int64, stall time.Duration) error {
	t.target.Store(n)
	if t.received.Load() >= n {
		t.doneOnce.Do(func() { close(t.done) })
	}
	return t.wait(ctx, stall, func(r int64) string { return fmt.Sprintf("%d of %d messages arrived", r, n) })
}

// wait waits until done is closed, ctx ends or nothing arrives for stall.
func (t *tally) wait(ctx context.Context, stall time.Duration, what func(received int64) string) error {
	last := t.received.Load()
	ticker := time.NewTicker(stall / 10)
	defer ticker.Stop()
	deadline := time.Now().Add(stall)
	for {
		select {
		case <-t.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			r := t.received.Load()
			if r != last {
				last = r
				deadline = time.Now().Add(stall)
			} else if time.Now().After(deadline) {
				return fmt.Errorf("%w: %s, none for %v", ErrStalled, what(r), stall)
			}
		}
	}
}
