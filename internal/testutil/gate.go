package testutil

// gate.go holds Gate, a one-shot signal that holds work back until a test
// lets it go, and Gates, gates found by a key that the work carries.

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Gate is a one-shot signal: work that waits on Opened is held until the
// test calls Open, after which every wait returns at once.
type Gate struct {
	once sync.Once
	ch   chan struct{}

	mu      sync.Mutex
	arrived int            // waits begun through Gates.Wait
	watches []arrivalWatch // Arrived's channels not yet closed
}

// arrivalWatch is a channel of Arrived, closed once n waits have begun.
type arrivalWatch struct {
	n  int
	ch chan struct{}
}

// NewGate returns a closed gate that opens at the latest when t ends, so
// that nothing the test held back is still waiting in its cleanups.
func NewGate(t testing.TB) *Gate {
	g := &Gate{ch: make(chan struct{})}
	t.Cleanup(g.Open)
	return g
}

// Open opens the gate. It may be called any number of times.
func (g *Gate) Open() { g.once.Do(func() { close(g.ch) }) }

// Opened returns a channel that is closed once the gate is open.
func (g *Gate) Opened() <-chan struct{} { return g.ch }

// Arrived returns a channel that is closed once n waits on the gate have
// begun through Gates.Wait: the work the gate holds back has reached it,
// which is later than any message that merely sent the work on its way.
func (g *Gate) Arrived(n int) <-chan struct{} {
	ch := make(chan struct{})
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.arrived >= n {
		close(ch)
		return ch
	}
	g.watches = append(g.watches, arrivalWatch{n: n, ch: ch})
	return ch
}

// arrive counts one wait and closes the watches it completes.
func (g *Gate) arrive() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.arrived++
	kept := g.watches[:0]
	for _, w := range g.watches {
		if w.n <= g.arrived {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	g.watches = kept
}

// Gates are gates found by key, for work that knows its gate only by data
// it carries, such as a task's payload. The zero value is ready to use.
type Gates struct {
	mu    sync.Mutex
	byKey map[string]*Gate
	seq   int
}

// New returns a gate that opens at the latest when t ends, and the key,
// unique among gs's keys, that Wait finds it under.
func (gs *Gates) New(t testing.TB) (string, *Gate) {
	g := NewGate(t)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.byKey == nil {
		gs.byKey = map[string]*Gate{}
	}
	gs.seq++
	key := fmt.Sprintf("%s#%d", t.Name(), gs.seq)
	gs.byKey[key] = g
	return key, g
}

// Wait waits until the gate under key is open and returns nil, or until
// ctx ends and returns its cause. It returns an error at once when there is
// no gate under key.
func (gs *Gates) Wait(ctx context.Context, key string) error {
	gs.mu.Lock()
	g := gs.byKey[key]
	gs.mu.Unlock()
	if g == nil {
		return fmt.Errorf("testutil: no gate %q", key)
	}
	g.arrive()
	select {
	case <-g.Opened():
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Arrived returns the Arrived(n) channel of the gate under key, or an
// error when there is no gate under key: work can wait for other work to
// reach its gate.
func (gs *Gates) Arrived(key string, n int) (<-chan struct{}, error) {
	gs.mu.Lock()
	g := gs.byKey[key]
	gs.mu.Unlock()
	if g == nil {
		return nil, fmt.Errorf("testutil: no gate %q", key)
	}
	return g.Arrived(n), nil
}
