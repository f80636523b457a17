package testutil

// eventually.go holds Eventually and EventuallyNoError: a test's wait for a
// condition that other goroutines or processes bring about, bounded by a
// deadline.

import (
	"errors"
	"testing"
	"time"
)

// The polls of a wait start firstPoll apart and the gap doubles up to
// lastPoll: a condition that holds soon is seen soon, and a long wait
// does not spin.
const (
	firstPoll = 100 * time.Microsecond
	lastPoll  = 20 * time.Millisecond
)

// errNotYet is what a false condition of Eventually reports to poll.
var errNotYet = errors.New("the condition does not hold")

// Eventually polls cond until it holds and fails t when it still does not
// once d has passed; what names the awaited condition in the failure
// ("the executor to register").
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	err := poll(d, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// EventuallyNoError polls cond until it returns nil and fails t when it
// still returns an error once d has passed; the failure names what and
// carries cond's last error, the reason it did not hold.
func EventuallyNoError(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	if err := poll(d, cond); err != nil {
		t.Fatalf("timed out after %s waiting for %s: %v", d, what, err)
	}
}

// poll calls cond until it returns nil, and returns cond's last error when
// d has passed and a last call still failed.
func poll(d time.Duration, cond func() error) error {
	deadline := time.Now().Add(d)
	gap := firstPoll
	timer := time.NewTimer(gap)
	defer timer.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		timer.Reset(min(gap, left))
		<-timer.C
		gap = min(2*gap, lastPoll)
	}
}
