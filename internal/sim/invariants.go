// Invariants: what must hold after every step and at the end of a run. To
// add one: check it where its facts are known (observeSend for what is
// sent, observeDelivery for what is delivered, checkStep after every step,
// checkJob when a job ends, checkEnd at the end), count it with
// stats.checked, and report a break with World.fail.

package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Names of the invariants, as the summary counts them.
const (
	invLaunchToDead  = "no LaunchTask to a removed executor"
	invAskBounded    = "every ask ends within its timeout"
	invKilledStop    = "tasks of an ended job stop"
	invJobResult     = "a job's result is exact, or its error the promised one"
	invNoHang        = "the application ends"
	invMetrics       = "metrics agree with what was delivered"
	invNothingLeft   = "nothing outlives the application"
	invKillAfter     = "a KillTask never overtakes its LaunchTask"
	invCores         = "an executor is never sent more tasks than its cores"
	killBound        = time.Second // for a KillTask to reach a task and stop it
	askSlack         = time.Second // past an ask's timeout, for its timer
	nothingLeftSleep = 10 * time.Minute
)

// askSent is an ask seen leaving a node.
type askSent struct {
	from, to, id string
	at           time.Duration
}

// observeSend checks what leaves a node, on the loop, as the world takes it.
func (w *World) observeSend(e *envelope) {
	a := w.app
	if e.kind != envMessage {
		return
	}
	if a.yarn != nil {
		a.yarn.observeSend(e)
	}
	if e.sender != nil && strings.HasPrefix(e.sender.Id, "future$") {
		w.asks = append(w.asks, askSent{from: e.from, to: e.to, id: e.sender.Id, at: w.now()})
	}
	if lt, ok := e.msg.(*messages.LaunchTask); ok && e.from == a.driverID {
		w.stats.check(invLaunchToDead)
		a.mu.Lock()
		ex := a.byNode[e.to]
		var idle uint64
		removed := false
		if ex != nil {
			idle, removed = a.removedIn[ex.id]
		}
		a.mu.Unlock()
		if removed && idle < w.idles {
			w.fail("%s: task %d sent to executor %s, which the driver removed at %s", invLaunchToDead, lt.GetTaskId(), ex.id,
				fmtDur(a.removedAt[ex.id]))
		}
		if ex != nil {
			w.cores.launched(lt.GetTaskId(), ex.id, int(lt.GetCpus()))
		}
		if p := lt.GetPayload(); len(p) >= 16 {
			a.mu.Lock()
			a.launched[lt.GetTaskId()] = taskOf{job: int(binary.BigEndian.Uint32(p[8:])), part: int(binary.BigEndian.Uint32(p[12:]))}
			a.mu.Unlock()
		}
	}
}

// observeDelivery counts what reaches the driver's scheduler endpoint, and
// checks that a KillTask reaches its executor after the task's LaunchTask.
func (w *World) observeDelivery(e *envelope) {
	if w.app.yarn != nil {
		w.app.yarn.observeDelivery(e)
	}
	switch m := e.msg.(type) {
	case *messages.LaunchTask:
		w.launched[m.GetTaskId()] = true
	case *messages.KillTask:
		w.stats.check(invKillAfter)
		if !w.launched[m.GetTaskId()] {
			w.fail("%s: the KillTask of task %d reached %s before its LaunchTask", invKillAfter, m.GetTaskId(), e.to)
		}
	}
	if u, ok := e.msg.(*messages.StatusUpdate); ok && e.to == w.app.driverID {
		switch u.GetState() {
		case messages.TaskState_TASK_STATE_RUNNING:
			w.app.mu.Lock()
			if _, ok := w.app.launched[u.GetTaskId()]; ok {
				w.app.reported[u.GetTaskId()] = true
			}
			w.app.mu.Unlock()
		case messages.TaskState_TASK_STATE_LAUNCHING:
		default:
			w.cores.ended(u.GetTaskId(), u.GetExecutorId())
		}
	}
	if e.to == w.app.driverID && e.target.Id == endpoints.DriverEndpointName {
		w.delivered[string(e.msg.ProtoReflect().Descriptor().Name())]++
	}
}

// checkStep runs at every idle point.
func (w *World) checkStep() {
	w.idles++
	w.trace.flush()
	a := w.app
	now := w.now()
	a.mu.Lock()
	for id, idle := range a.removedIn {
		if idle == ^uint64(0) {
			a.removedIn[id] = w.idles
		}
	}
	for _, r := range a.running {
		j := a.jobs[r.job]
		ex := a.executors[r.exec]
		if !j.ended || ex == nil || ex.held > 0 {
			continue
		}
		w.stats.check(invKilledStop)
		// A message scheduled while the executor was slow may still
		// be on its way.
		since := max(j.endAt, ex.holdEnd+maxSlow)
		if now-since > killBound {
			a.mu.Unlock()
			w.fail("%s: task %d (job %d partition %d) still runs on executor %s, %s after its job ended",
				invKilledStop, r.tid, r.job, r.part, r.exec, fmtDur(now-j.endAt))
			a.mu.Lock()
		}
	}
	a.mu.Unlock()
	// On a netty seed a step's sends are observed before its deliveries:
	// the cores are counted once the step's all are.
	w.stats.check(invCores)
	if id, n, over := w.cores.over(w.cfg.cores); over {
		w.fail("%s: executor %s, of %d cores, was sent tasks of %d cores that have not ended", invCores, id, w.cfg.cores, n)
	}
	w.checkAsks(now)
	if a.yarn != nil {
		a.yarn.checkStep(now)
	}
	w.checkNetty()
}

// checkAsks looks up the asks older than the longest timeout: none may
// still be pending.
func (w *World) checkAsks(now time.Duration) {
	bound := w.cfg.askTimeout + askSlack
	i := 0
	for ; i < len(w.asks) && now-w.asks[i].at > bound; i++ {
		s := w.asks[i]
		w.stats.check(invAskBounded)
		host, ok := w.askHost(s.from)
		if !ok {
			continue
		}
		if _, st := host.LookupReply(s.to, []byte(s.id)); st == 0 { // actor.ReplyPending
			w.fail("%s: an ask from %s to %s made at %s is still pending", invAskBounded, s.from, s.to, fmtDur(s.at))
		}
	}
	w.asks = w.asks[i:]
}

// checkJob checks a job's outcome when RunJob returned.
func (a *app) checkJob(j *job) {
	w := a.w
	w.stats.check(invJobResult)
	a.mu.Lock()
	res, err, cancelled := j.res, j.err, j.cancelled
	// A partition may fail its job by injected failures and attempts lost
	// with their executor while they ran (which the driver counts unless it
	// killed, stopped or decommissioned the executor itself).
	injected := make(map[int]int, len(j.injected))
	for p, n := range j.injected {
		injected[p] = n
	}
	for p, n := range j.lostRunning {
		injected[p] += n
	}
	a.mu.Unlock()
	switch {
	case err == nil:
		if len(res) != j.parts {
			w.fail("%s: job %d returned %d results for %d partitions", invJobResult, j.idx, len(res), j.parts)
			return
		}
		for p, r := range res {
			if want := expected(w.seed, j.idx, p); !bytes.Equal(r, want) {
				w.fail("%s: job %d partition %d returned %q, want %q", invJobResult, j.idx, p, r, want)
			}
		}
	case cancelled && errors.Is(err, errJobCancelled):
	case a.yarn != nil && errors.Is(err, cluster.ErrAppFailed):
		a.yarn.checkAppFailure(j, err)
	case errors.Is(err, endpoints.ErrTaskFailed):
		for _, n := range injected {
			if n >= w.cfg.maxFailures {
				return
			}
		}
		w.fail("%s: job %d failed with %v, but no partition failed %d times (injected or lost while running: %v)", invJobResult, j.idx, err,
			w.cfg.maxFailures, injected)
	default:
		w.fail("%s: job %d failed with an unexpected error: %v", invJobResult, j.idx, err)
	}
}

// checkMetrics compares the driver's counts of received messages with
// what the network delivered to its scheduler endpoint, before the
// application stops.
func (a *app) checkMetrics() {
	w := a.w
	mfs, err := a.driverEnv.Metrics().Gather()
	if err != nil {
		w.fail("%s: gather: %v", invMetrics, err)
		return
	}
	got := make(map[string]float64)
	registered := -1.0
	for _, mf := range mfs {
		switch mf.GetName() {
		case "sparkrpc_messages_received_total":
			for _, m := range mf.GetMetric() {
				var ep, typ string
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "endpoint":
						ep = l.GetValue()
					case "type":
						typ = l.GetValue()
					}
				}
				if ep == endpoints.DriverEndpointName {
					typ = typ[strings.LastIndex(typ, ".")+1:]
					got[typ] += m.GetCounter().GetValue()
				}
			}
		case "sparkrpc_scheduler_executors_registered_total":
			registered = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	for _, typ := range []string{"StatusUpdate", "RegisterExecutor", "LaunchedExecutor"} {
		w.stats.check(invMetrics)
		if got[typ] != float64(w.delivered[typ]) {
			w.fail("%s: the driver counted %v %s received, the network delivered %d", invMetrics, got[typ], typ, w.delivered[typ])
		}
	}
	w.stats.check(invMetrics)
	a.mu.Lock()
	added := a.added
	a.mu.Unlock()
	if registered != float64(added) {
		w.fail("%s: executors_registered_total is %v, ExecutorAdded events %d", invMetrics, registered, added)
	}
}

// checkEnd runs once the application has stopped and the network is
// empty: no job, task, node, goroutine or timer is left.
func (w *World) checkEnd() {
	a := w.app
	w.stats.check(invNothingLeft)
	a.mu.Lock()
	for _, j := range a.jobs {
		if !j.ended {
			w.fail("%s: job %d never ended", invNoHang, j.idx)
		}
	}
	if n := len(a.running); n > 0 {
		w.fail("%s: %d tasks still run", invNothingLeft, n)
	}
	a.mu.Unlock()
	w.net.mu.Lock()
	var left []string
	for id := range w.net.nodes {
		left = append(left, id)
	}
	w.net.mu.Unlock()
	left = append(left, w.tcpLeft()...)
	if len(left) > 0 {
		w.fail("%s: envs still on the network: %v", invNothingLeft, left)
	}
	if g := bubbleGoroutines(); g != "" {
		w.fail("%s: goroutines left:\n%s", invNothingLeft, g)
		return
	}
	// A timer left behind fires: sleep long, and see that nothing moved.
	time.Sleep(nothingLeftSleep)
	if g := bubbleGoroutines(); g != "" {
		w.fail("%s: goroutines started by a timer after the end:\n%s", invNothingLeft, g)
	}
	if p := w.net.takePending(); len(p) > 0 {
		w.fail("%s: %d messages sent after the end", invNothingLeft, len(p))
	}
}

// bubbleGoroutines returns the stacks of the goroutines of the caller's
// synctest bubble other than the caller, all idle at this point.
func bubbleGoroutines() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	self := make([]byte, 256)
	self = self[:runtime.Stack(self, false)]
	header, _, _ := strings.Cut(string(self), "\n")
	i := strings.Index(header, "synctest bubble ")
	if i < 0 {
		return ""
	}
	bubble := strings.TrimSuffix(header[i:], "]:")
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		h, _, _ := strings.Cut(g, "\n")
		if h == header || !strings.Contains(h, bubble+"]") || strings.Contains(g, "testing/synctest.") {
			continue
		}
		out = append(out, g)
	}
	return strings.Join(out, "\n\n")
}

var _ = fmt.Sprintf
