package actor

import (
	"math"
	"testing"
)

func TestFutureIDRoundTrip(t *testing.T) {
	for _, id := range []uint64{0, 1, 31, 32, 1 << 20, 1 << 63, math.MaxUint64} {
		s := futureID(id)
		if len(s) != futureIDLen {
			t.Errorf("futureID(%d) = %q: not %d bytes", id, s, futureIDLen)
		}
		if !isFutureID(s) {
			t.Errorf("%q is not a future id", s)
		}
		if got, ok := parseFutureID(s); !ok || got != id {
			t.Errorf("parseFutureID(%q) = %d, %v, want %d", s, got, ok, id)
		}
		if got, ok := parseFutureID([]byte(s)); !ok || got != id {
			t.Errorf("parseFutureID(bytes %q) = %d, %v, want %d", s, got, ok, id)
		}
	}
	for _, s := range []string{"", "future$", "future$.", "future$1", "future$.A", "echo", "future$.zzzzzzzzzzzzzzzzz",
		"future$.000000000000", "future$.0000000000000w", "future$.g000000000000", "future$.000000000000w", "future$.00000000000000"} {
		if id, ok := parseFutureID(s); ok {
			t.Errorf("parseFutureID(%q) = %d, want no id", s, id)
		}
	}
}

// An ask whose Result has returned is no longer pending: the registry (and
// so the asks_in_flight gauge) forgets it before its waiter wakes.
func TestCompletedAskIsNotPending(t *testing.T) {
	e := &Env{futures: newFutureRegistry()}
	for i := range 2000 {
		f := newFuture(e, nil, nil, InfiniteTimeout())
		if _, ok := e.futures.add(f); !ok {
			t.Fatal("the registry refused an ask")
		}
		go f.complete(nil, nil)
		if _, err := f.Result(); err != nil {
			t.Fatal(err)
		}
		if n := e.futures.count(); n != 0 {
			t.Fatalf("ask %d: %d asks pending after Result returned, want 0", i, n)
		}
	}
}

// The sender PID of a remote ask keeps its id string in the future: setting
// it allocates nothing, and the id is futureID's, up to the longest.
func TestReplyToNeedsNoAllocation(t *testing.T) {
	f := &Future{}
	for _, id := range []uint64{1, 1 << 40, math.MaxUint64} {
		f.setReplyTo("host:7077", id)
		if f.replyTo.Id != futureID(id) || f.replyTo.Address != "host:7077" {
			t.Errorf("setReplyTo(%d) = %s@%s, want %s", id, f.replyTo.Id, f.replyTo.Address, futureID(id))
		}
	}
	if n := testing.AllocsPerRun(100, func() { f.setReplyTo("host:7077", math.MaxUint64) }); n != 0 {
		t.Errorf("setReplyTo: %.1f allocations, want 0", n)
	}
}
