// Fault kinds: what the simulator does to the application, drawn from the
// seed.

package sim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// faultKind names a kind of fault. To add one: a constant here, its name in
// faultNames, a way to draw it in drawFault, and what it does in inject.
type faultKind int

const (
	faultDelay     faultKind = iota // a window of large delays: reordering across connections
	faultDrop                       // an executor's connection to the driver is cut
	faultPartition                  // an executor's link to the driver holds its messages, then heals
	faultKill                       // an executor's process is killed (SIGKILL)
	faultPause                      // an executor's process is stopped, then continued (SIGSTOP, SIGCONT)
	faultSlow                       // an executor's messages are slow for a while
	faultNodeLoss                   // every executor of a host is killed
	faultTaskFail                   // a burst of task failures
	faultHalfOpen                   // netty seeds: a connection's close reaches the driver late (tcprace.go)
	// The kinds above are drawn for every seed (drawFault), but half-open,
	// which netty seeds draw apart (setupNetty); those below only for the
	// seeds that run the YARN-shaped cluster (drawYarn). The seeds' other
	// draws stay what they were.
	faultLaunchFail // for a while, container launches fail
	numFaultKinds
)

// numBaseFaultKinds are the kinds drawFault draws from.
const numBaseFaultKinds = faultHalfOpen

var faultNames = [numFaultKinds]string{"delay", "drop", "partition", "kill", "pause", "slow", "node-loss", "task-failures",
	"half-open", "launch-failures"}

func (k faultKind) String() string { return faultNames[k] }

// fault is one fault of a schedule.
type fault struct {
	kind   faultKind
	at     time.Duration
	length time.Duration // of a window, a pause, a partition
	target int           // an executor's number (its id, if it is started by then), or a host's
	prob   float64       // of a task failing during a burst
}

func (f fault) String() string {
	switch f.kind {
	case faultDelay, faultTaskFail, faultLaunchFail:
		return fmt.Sprintf("%s for %s", f.kind, fmtDur(f.length))
	case faultNodeLoss:
		return fmt.Sprintf("%s of host-%d", f.kind, f.target)
	case faultDrop, faultKill:
		return fmt.Sprintf("%s executor %d", f.kind, f.target)
	}
	return fmt.Sprintf("%s executor %d for %s", f.kind, f.target, fmtDur(f.length))
}

// drawFaults draws 0 to 6 faults in the first 20 seconds.
func drawFaults(r *rand.Rand, c *config) []fault {
	var out []fault
	for range r.IntN(7) {
		out = append(out, drawFault(r, c))
	}
	return out
}

func drawFault(r *rand.Rand, c *config) fault {
	f := fault{kind: faultKind(r.IntN(int(numBaseFaultKinds))), at: durBetween(r, 0, 20*time.Second),
		target: between(r, 1, c.executors+2)}
	switch f.kind {
	case faultDelay:
		f.length = durBetween(r, 100*time.Millisecond, 5*time.Second)
	case faultPartition, faultSlow:
		f.length = durBetween(r, 100*time.Millisecond, 2*c.networkTimeout)
	case faultPause:
		// Half of them longer than the heartbeat timeout (the SIGSTOP case).
		f.length = durBetween(r, 100*time.Millisecond, c.networkTimeout)
		if r.IntN(2) == 0 {
			f.length += c.networkTimeout + c.timeoutInterval
		}
	case faultNodeLoss:
		f.target = r.IntN(c.hosts)
	case faultTaskFail:
		f.length = durBetween(r, 100*time.Millisecond, 10*time.Second)
		f.prob = 0.2 + 0.8*r.Float64()
	}
	return f
}

// scheduleFaults puts the seed's faults in the world's queue.
func (w *World) scheduleFaults() {
	for _, f := range w.cfg.faults {
		w.at(f.at, "fault: "+f.String(), func() { w.inject(f) })
	}
}

// inject applies f now.
func (w *World) inject(f fault) {
	w.stats.faults[f.kind]++
	a := w.app
	switch f.kind {
	case faultDelay:
		w.net.spikes++
		w.at(f.length, "delay window ends", func() { w.net.spikes-- })
	case faultDrop:
		if ex := a.live(strconv.Itoa(f.target)); ex != nil {
			w.cutFromDriver(ex)
		}
	case faultPartition:
		if ex := a.live(strconv.Itoa(f.target)); ex != nil {
			w.hold(ex, f.length, true)
		}
	case faultKill:
		if ex := a.live(strconv.Itoa(f.target)); ex != nil {
			w.kill(ex)
		}
	case faultPause:
		if ex := a.live(strconv.Itoa(f.target)); ex != nil {
			w.pause(ex, f.length)
		}
	case faultSlow:
		if ex := a.live(strconv.Itoa(f.target)); ex != nil {
			w.slow(ex, f.length)
		}
	case faultNodeLoss:
		if a.yarn != nil {
			a.yarn.loseNode("host-" + strconv.Itoa(f.target))
			break
		}
		for _, ex := range a.onHost("host-" + strconv.Itoa(f.target)) {
			w.kill(ex)
		}
	case faultTaskFail:
		w.mu.Lock()
		w.bursts = append(w.bursts, burst{from: w.now(), to: w.now() + f.length, prob: f.prob})
		w.mu.Unlock()
	case faultLaunchFail:
		w.mu.Lock()
		w.launchBursts = append(w.launchBursts, burst{from: w.now(), to: w.now() + f.length, prob: f.prob})
		w.mu.Unlock()
	case faultHalfOpen:
		if ex := a.anyLive(f.target); ex != nil {
			w.tcpHalfOpen(a.hostsOf(ex), driverHost, f.prob, f.length)
		}
	}
}

// maxSlow bounds the delay a slow executor adds to a message.
const maxSlow = 2 * time.Second

// burst is a window of task failures.
type burst struct {
	from, to time.Duration
	prob     float64
}

// failureBurst reports whether a task that ends now fails; safe from any
// goroutine. The draw depends on the task's coordinates only.
func (w *World) failureBurst(job, part, attempt int) bool {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bursts {
		if now >= b.from && now < b.to && float64(mix(w.seed^0xfa11, job, part, attempt)%1000) < b.prob*1000 {
			return true
		}
	}
	return false
}

// live returns the executor of id when it runs and is not held already.
func (a *app) live(id string) *executor {
	a.mu.Lock()
	defer a.mu.Unlock()
	ex := a.executors[id]
	if ex == nil || ex.exited || ex.killed || ex.held > 0 {
		return nil
	}
	return ex
}

func (a *app) onHost(host string) []*executor {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*executor
	for _, id := range slices.SortedFunc(maps.Keys(a.executors), byNumber) {
		ex := a.executors[id]
		if ex.host == host && !ex.exited && !ex.killed {
			out = append(out, ex)
		}
	}
	return out
}

// kill kills ex's process: its messages in flight are lost, its peers see
// its connections close, and its envs stop at once.
func (w *World) kill(ex *executor) {
	a := w.app
	a.mu.Lock()
	ex.killed = true
	nodes := append([]*node(nil), ex.nodes...)
	hosts := append([]*tcpHost(nil), ex.hosts...)
	envs := append(ex.envs[:0:0], ex.envs...)
	ex.paused = false
	for _, ch := range ex.waiters {
		close(ch)
	}
	ex.waiters = nil
	a.mu.Unlock()
	w.killNodes(nodes...)
	w.tcpKill(hosts)
	// The envs close first, one after another; RunExecutor sees the kill
	// as its env terminating. Its context is cancelled a step later (for
	// an executor that has no env yet): were both done in one step, its
	// select would see both ready and pick one at random, and the two ways
	// out take different times.
	for _, env := range envs {
		_ = env.Close()
	}
	w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", ex.cancel)
}

// killNodes kills nodes' processes (on the in-memory network): what they
// have in flight is lost and their peers see their connections close.
func (w *World) killNodes(nodes ...*node) {
	n := w.net
	var notify []*envelope
	n.mu.Lock()
	for _, nd := range nodes {
		nd.killed = true
		for _, other := range n.linkedLocked(nd.info.Identity) {
			notify = append(notify, n.cutLocked(nd.info.Identity, other)...)
		}
	}
	n.mu.Unlock()
	for _, e := range notify {
		w.schedule(e)
	}
}

// cutFromDriver cuts ex's connections to the driver.
func (w *World) cutFromDriver(ex *executor) {
	n := w.net
	var notify []*envelope
	w.app.mu.Lock()
	nodes := append([]*node(nil), ex.nodes...)
	w.app.mu.Unlock()
	n.mu.Lock()
	for _, nd := range nodes {
		notify = append(notify, n.cutLocked(nd.info.Identity, w.app.driverID)...)
	}
	n.mu.Unlock()
	for _, e := range notify {
		w.schedule(e)
	}
	w.tcpCut(w.app.hostsOf(ex), driverHost)
}

// hold holds ex's links to the driver (a partition) for d, then releases
// what waited, in order.
func (w *World) hold(ex *executor, d time.Duration, partition bool) {
	n := w.net
	w.app.mu.Lock()
	nodes := append([]*node(nil), ex.nodes...)
	ex.held++
	w.app.mu.Unlock()
	var keys [][2]string
	n.mu.Lock()
	for _, nd := range nodes {
		key := pairKey(nd.info.Identity, w.app.driverID)
		if l := n.links[key]; l != nil && l.connected {
			l.held = true
			keys = append(keys, key)
		}
	}
	n.mu.Unlock()
	hosts := w.app.hostsOf(ex)
	w.tcpHold(hosts, driverHost, true)
	w.at(d, fmt.Sprintf("partition of executor %s heals", ex.id), func() {
		n.mu.Lock()
		for _, k := range keys {
			if l := n.links[k]; l != nil {
				l.held = false
			}
		}
		n.mu.Unlock()
		w.tcpHold(hosts, driverHost, false)
		w.unhold(ex)
	})
}

// pause stops ex's process for d: nothing it sends or is sent moves, and
// its tasks do not progress.
func (w *World) pause(ex *executor, d time.Duration) {
	n := w.net
	w.app.mu.Lock()
	nodes := append([]*node(nil), ex.nodes...)
	ex.held++
	ex.paused = true
	w.app.mu.Unlock()
	n.mu.Lock()
	for _, nd := range nodes {
		nd.paused = true
	}
	n.mu.Unlock()
	hosts := w.app.hostsOf(ex)
	w.tcpPause(hosts, true)
	w.at(d, fmt.Sprintf("executor %s continues", ex.id), func() {
		n.mu.Lock()
		for _, nd := range nodes {
			nd.paused = false
		}
		n.mu.Unlock()
		w.tcpPause(hosts, false)
		w.app.mu.Lock()
		ex.paused = false
		waiters := ex.waiters
		ex.waiters = nil
		w.app.mu.Unlock()
		// One task a step, in the order of their ids.
		for _, tid := range slices.Sorted(maps.Keys(waiters)) {
			w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { close(waiters[tid]) })
		}
		w.unhold(ex)
	})
}

// slow adds a delay to every message to or from ex for d.
func (w *World) slow(ex *executor, d time.Duration) {
	n := w.net
	w.app.mu.Lock()
	nodes := append([]*node(nil), ex.nodes...)
	ex.held++
	w.app.mu.Unlock()
	extra := w.jitter(50*time.Millisecond, maxSlow)
	n.mu.Lock()
	for _, nd := range nodes {
		nd.slow = extra
	}
	n.mu.Unlock()
	hosts := w.app.hostsOf(ex)
	w.tcpSlow(hosts, extra)
	w.at(d, fmt.Sprintf("executor %s is no longer slow", ex.id), func() {
		n.mu.Lock()
		for _, nd := range nodes {
			nd.slow = 0
		}
		n.mu.Unlock()
		w.tcpSlow(hosts, 0)
		w.unhold(ex)
	})
}

// unhold ends one hold of ex and delivers what waited, from the next
// step on: what the end of the hold woke (a paused task) runs first.
func (w *World) unhold(ex *executor) {
	w.app.mu.Lock()
	ex.held--
	ex.holdEnd = w.now()
	w.app.mu.Unlock()
	for _, c := range w.net.release() {
		w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { w.drain1(c) })
	}
	w.tcpRelease()
}

// delay is how long e takes on its connection.
func (n *network) delay(e *envelope) time.Duration {
	w := n.w
	d := w.jitter(w.cfg.minDelay, w.cfg.maxDelay)
	n.mu.Lock()
	spikes := n.spikes
	var slow time.Duration
	for _, id := range []string{e.from, e.to} {
		if nd := n.nodes[id]; nd != nil && nd.slow > slow {
			slow = nd.slow
		}
	}
	n.mu.Unlock()
	if spikes > 0 {
		d += w.jitter(0, 300*time.Millisecond)
	}
	return d + slow
}
