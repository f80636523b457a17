// The mutex with a release hook.

package lockhook

import "sync"

// Mutex is a sync.Mutex whose Unlock, once the lock is free, calls
// Released when it is set. Released runs on the goroutine that unlocked;
// it must not block and must not take the lock. The zero value is an
// unlocked mutex without a hook.
type Mutex struct {
	sync.Mutex
	Released func()
}

// Unlock releases the lock, then calls the release hook, if any.
func (m *Mutex) Unlock() {
	m.Mutex.Unlock()
	if m.Released != nil {
		m.Released()
	}
}
