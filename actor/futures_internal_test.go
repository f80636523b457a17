package actor

import (
	"math"
	"testing"
)

func TestFutureIDRoundTrip(t *testing.T) {
	for _, id := range []uint64{1, 35, 36, 1 << 20, math.MaxUint64} {
		s := futureID(id)
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
	for _, s := range []string{"", "future$", "future$.", "future$1", "future$.A", "echo", "future$.zzzzzzzzzzzzzzzzz"} {
		if id, ok := parseFutureID(s); ok {
			t.Errorf("parseFutureID(%q) = %d, want no id", s, id)
		}
	}
}
