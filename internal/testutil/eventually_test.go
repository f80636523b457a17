package testutil_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestEventually(t *testing.T) {
	tests := []struct {
		name    string
		holdsAt int32 // the call at which the condition first holds; 0: never
		want    string
	}{
		{name: "holds at once", holdsAt: 1},
		{name: "holds later", holdsAt: 5},
		{name: "never holds", want: "timed out after 20ms waiting for the thing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			got := failed(t, func(tb testing.TB) {
				testutil.Eventually(tb, 20*time.Millisecond, "the thing", func() bool {
					return calls.Add(1) == tc.holdsAt
				})
			})
			if got != tc.want {
				t.Fatalf("failure %q, want %q", got, tc.want)
			}
			if tc.holdsAt != 0 && calls.Load() != tc.holdsAt {
				t.Fatalf("cond called %d times, want %d", calls.Load(), tc.holdsAt)
			}
		})
	}
}

// The condition is checked once more at the deadline: one that holds from
// then on passes.
func TestEventuallyChecksAtTheDeadline(t *testing.T) {
	const d = 5 * time.Millisecond
	deadline := time.Now().Add(d)
	got := failed(t, func(tb testing.TB) {
		testutil.Eventually(tb, d, "the deadline", func() bool { return !time.Now().Before(deadline) })
	})
	if got != "" {
		t.Fatalf("failure %q, want none", got)
	}
}

func TestEventuallyNoErrorReportsTheLastError(t *testing.T) {
	var calls atomic.Int32
	got := failed(t, func(tb testing.TB) {
		testutil.EventuallyNoError(tb, 20*time.Millisecond, "the pod", func() error {
			calls.Add(1)
			return errors.New("pod is Pending")
		})
	})
	if want := "timed out after 20ms waiting for the pod: pod is Pending"; got != want {
		t.Fatalf("failure %q, want %q", got, want)
	}
	if calls.Load() < 2 {
		t.Fatalf("cond called %d times, want it polled", calls.Load())
	}

	calls.Store(0)
	got = failed(t, func(tb testing.TB) {
		testutil.EventuallyNoError(tb, time.Minute, "the pod", func() error {
			if calls.Add(1) < 3 {
				return errors.New("not yet")
			}
			return nil
		})
	})
	if got != "" || calls.Load() != 3 {
		t.Fatalf("failure %q after %d calls, want none after 3", got, calls.Load())
	}
}
