// Running one seed.

package sim

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// Result is what one seed's run found.
type Result struct {
	Seed uint64
	Hash string // the trace's hash: the same seed gives the same hash
	// RaceHash is the hash of the trace up to the first armed race, when
	// one ran: what follows it depends on the Go scheduler too.
	RaceHash string
	Failures []string // broken invariants, in the order found
	Trace    []string // the lines around the first failure, or every line with keepTrace
	Faults   []string // the seed's fault schedule
	Stats    *Stats
}

// Failed reports whether an invariant broke.
func (r Result) Failed() bool { return len(r.Failures) > 0 }

// Comparable is the hash two runs of the seed must agree on: the whole
// trace's, or, after an armed race, the trace's up to it.
func (r Result) Comparable() string {
	if r.RaceHash != "" {
		return r.RaceHash
	}
	return r.Hash
}

// Replay is the command that runs the seed again.
func (r Result) Replay() string {
	return fmt.Sprintf("go test ./internal/sim -run TestSimulation -count=1 -args -seed=%d -trace", r.Seed)
}

// drainBound bounds the time a failed run gets to stop.
const drainBound = 10 * time.Minute

// RunSeed runs the application of seed in a synctest bubble of t and
// returns what it found. keepTrace keeps every line of the trace.
func RunSeed(t *testing.T, seed uint64, keepTrace bool) Result {
	var res Result
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(seed)
		w.trace.keep = keepTrace
		worlds.Store(seed, w)
		defer worlds.Delete(seed)
		for _, f := range w.cfg.faults {
			res.Faults = append(res.Faults, fmt.Sprintf("at %s: %s", fmtDur(f.at), f))
		}
		w.app = newApp(w)
		if w.tcp != nil {
			w.trace.add("on netty's TCP transport")
		}
		if err := w.app.start(); err != nil {
			w.fail("start: %v", err)
		} else {
			w.scheduleFaults()
			w.run()
		}
		if !w.failed() {
			w.checkEnd()
		}
		if w.failed() {
			w.drain()
		}
		for _, f := range w.cleanup {
			f()
		}
		w.trace.flush()
		w.stats.Seeds = 1
		if w.tcp != nil {
			w.stats.netty = 1
		}
		w.mu.Lock()
		res.Failures = append([]string(nil), w.failures...)
		w.mu.Unlock()
		if len(res.Failures) > 0 {
			w.stats.Failed = 1
		}
		res.Seed, res.Hash, res.Trace, res.Stats = seed, w.trace.Hash(), w.trace.around(), w.stats
		res.RaceHash = w.trace.raced
	})
	return res
}

// drain stops what still runs after a failure, delivering messages a
// while longer, so that the bubble ends.
func (w *World) drain() {
	w.draining.Store(true)
	w.app.teardown()
	deadline := time.Now().Add(drainBound)
	for time.Now().Before(deadline) {
		synctest.Wait()
		w.idlePointQuiet()
		if w.queue.Len() == 0 {
			if bubbleGoroutines() == "" {
				return
			}
			time.Sleep(time.Second)
			continue
		}
		ev := w.popEvent()
		if ev.at.After(time.Now()) {
			time.Sleep(time.Until(ev.at))
		}
		ev.apply()
	}
}
