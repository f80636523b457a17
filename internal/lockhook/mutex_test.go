package lockhook_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/lockhook"
)

// Unlock calls the hook once the lock is free, and only when one is set.
func TestUnlockCallsTheHookOnceTheLockIsFree(t *testing.T) {
	var m lockhook.Mutex
	m.Lock()
	m.Unlock() // no hook: nothing to call
	calls := 0
	m.Released = func() {
		if !m.TryLock() {
			t.Error("the hook ran while the lock was still held")
			return
		}
		m.Mutex.Unlock()
		calls++
	}
	m.Lock()
	m.Unlock()
	if calls != 1 {
		t.Fatalf("hook called %d times, want 1", calls)
	}
}
