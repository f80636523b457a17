package lockhook_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/lockhook"
)

// Unlock calls the hook once the lock is free, and only when one is set.
func TestUnlockCallsTheHookOnceTheLockIsFree(t *testing.T) {
	var m lockhook.Mutex
	held := 0
	m.Lock()
	held++ // no hook: Unlock has nothing to call
	m.Unlock()
	calls := 0
	m.Released = func() {
		if !m.TryLock() {
			t.Error("the hook ran while the lock was still held")
			return
		}
		held--
		m.Mutex.Unlock()
		calls++
	}
	m.Lock()
	held++
	m.Unlock()
	if calls != 1 || held != 1 {
		t.Fatalf("hook called %d times (held %d), want 1 call", calls, held)
	}
}
