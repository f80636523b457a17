package testutil

// recv.go holds Recv, a test's receive from a channel, bounded by a
// deadline.

import (
	"testing"
	"time"
)

// Recv returns the next value of ch, or what a closed ch yields, and fails t
// when none comes within d; what names the awaited value in the failure.
func Recv[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %s waiting for %s", d, what)
		panic("unreachable")
	}
}
