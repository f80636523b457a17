// The invariants of the YARN-shaped cluster: what the allocator promises
// (executors at most at their target, a failed container counted once, the
// application failed with exit code 11 when the failures reach
// spark.executor.maxNumFailures and only then) and what the resource
// manager promises (no container outlives its application).

package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Names of the cluster's invariants, as the summary counts them.
const (
	invYarnTarget    = "never more executors than the allocator's target"
	invYarnFailures  = "the application fails with exit code 11 when its failed containers reach the maximum, and only then"
	invYarnAccepted  = "the resource manager accepts the application"
	invYarnLeftovers = "no container outlives its application in the resource manager"
	// amFailBound is how long the application master may take to exit
	// once the failures it was told of reach the maximum.
	amFailBound = 5 * time.Second
	// pollEvery is how often the simulator polls the resource manager: an
	// odd instant, apart from the round ones the code under test's timers
	// use.
	pollEvery = 500*time.Millisecond + 1357
)

// allocModel counts the application's failed executor containers the way
// the allocator must, from what the application master sends and is
// told (a reference the allocator is compared with): a container it
// started counts once when it completes with a status the application
// caused, unless the driver had asked to kill it; a start that fails
// counts as such a completion. Only the loop uses it.
type allocModel struct {
	max       int
	amNode    string            // the application master's env, once seen
	byExec    map[string]string // executor id → container id
	live      map[string]bool   // containers started and not completed, as the AM knows
	killed    map[string]bool   // containers the driver asked the AM to kill
	starts    map[string]string // pending AmStartContainer asks: reply id → container id
	startedAt map[string]time.Duration
	failures  int
	reachedAt time.Duration // when failures reached max; -1 before
	finished  bool          // the AM was told that the driver finished
}

func newAllocModel(max int) allocModel {
	return allocModel{max: max, byExec: make(map[string]string), live: make(map[string]bool), killed: make(map[string]bool),
		starts: make(map[string]string), startedAt: make(map[string]time.Duration), reachedAt: -1}
}

// exitCausedByApp is Spark's rule for the statuses that count as an
// executor's failure.
func exitCausedByApp(status int32) bool {
	switch status {
	case 0, cluster.ContainerExitAborted, cluster.ContainerExitPreempted, cluster.ContainerExitKilledByAM,
		cluster.ContainerExitKilledByRM, cluster.ContainerExitAfterAppDone:
		return false
	}
	return true
}

// completed is the AM learning that container id ended with status.
func (m *allocModel) completed(id string, status int32, now time.Duration) {
	if !m.live[id] || m.finished {
		return
	}
	delete(m.live, id)
	if !m.killed[id] && exitCausedByApp(status) {
		m.failures++
		if m.failures >= m.max && m.reachedAt < 0 {
			m.reachedAt = now
		}
	}
}

// observeSend watches what the application master sends.
func (y *yarnCluster) observeSend(e *envelope) {
	m := &y.model
	if st, ok := e.msg.(*messages.AmStartContainer); ok {
		m.amNode = e.from
		id := st.GetContainerId()
		cmd := st.GetLaunchContext().GetCommand()
		if i := slices.Index(cmd, "--executor-id"); i >= 0 && i+1 < len(cmd) {
			m.byExec[cmd[i+1]] = id
		}
		m.live[id] = true
		if e.sender != nil {
			m.starts[e.sender.Id] = id
			m.startedAt[e.sender.Id] = y.w.now()
		}
	}
}

// observeDelivery watches what the application master is told.
func (y *yarnCluster) observeDelivery(e *envelope) {
	m := &y.model
	if m.amNode == "" || e.to != m.amNode {
		return
	}
	now := y.w.now()
	switch msg := e.msg.(type) {
	case *messages.AmKillExecutors:
		for _, id := range msg.GetExecutorIds() {
			if cid, ok := m.byExec[id]; ok && m.live[cid] {
				m.killed[cid] = true
			}
		}
	case *messages.AmDriverFinished:
		m.finished = true
	case *messages.AmAllocateResponse:
		for _, st := range msg.GetCompleted() {
			m.completed(st.GetContainerId(), st.GetExitStatus(), now)
		}
	case *messages.RpcFailure:
		if id, ok := m.starts[e.target.Id]; ok {
			m.completed(id, cluster.ContainerExitInvalid, now)
		}
	}
	delete(m.starts, e.target.Id)
	delete(m.startedAt, e.target.Id)
}

// timedOutStarts counts the container starts whose ask timed out with no
// answer: the allocator counts them as failed launches.
func (y *yarnCluster) timedOutStarts(now time.Duration) {
	m := &y.model
	for _, rid := range slices.Sorted(maps.Keys(m.startedAt)) {
		if now-m.startedAt[rid] >= y.w.cfg.askTimeout {
			m.completed(m.starts[rid], cluster.ContainerExitInvalid, now)
			delete(m.starts, rid)
			delete(m.startedAt, rid)
		}
	}
}

// checkStep checks, after every step, that no more executors run than the
// target, and that an application master whose failures reached the
// maximum has exited.
func (y *yarnCluster) checkStep(now time.Duration) {
	w, a := y.w, y.a
	w.stats.check(invYarnTarget)
	a.mu.Lock()
	var running []string
	for id, ex := range a.executors {
		if !ex.exited && !ex.killed {
			running = append(running, id)
		}
	}
	a.mu.Unlock()
	if len(running) > w.cfg.executors {
		slices.SortFunc(running, byNumber)
		w.fail("%s: executors %v run, the target is %d", invYarnTarget, running, w.cfg.executors)
	}
	y.timedOutStarts(now)
	y.mu.Lock()
	ended := y.amEnded
	y.mu.Unlock()
	if m := &y.model; m.reachedAt >= 0 && !ended && now-m.reachedAt > amFailBound {
		w.stats.check(invYarnFailures)
		w.fail("%s: %d containers failed by %s (maximum %d), and the application master still runs", invYarnFailures,
			m.failures, fmtDur(m.reachedAt), m.max)
		m.reachedAt = now // once
	}
}

// amExited checks how the application master ended, on the loop.
func (y *yarnCluster) amExited(err error) {
	w := y.w
	y.mu.Lock()
	y.amExit, y.amEnded = err, true
	y.mu.Unlock()
	w.trace.add("application master exited: %v", err)
	y.timedOutStarts(w.now())
	m := &y.model
	w.stats.check(invYarnFailures)
	code := 0
	if ee, ok := err.(*cluster.AMExitError); ok {
		code = ee.Code
	}
	switch {
	case code == cluster.ExitMaxExecutorFailures && m.failures < m.max:
		w.fail("%s: the application master exited with code 11 (%v) after %d failed containers, the maximum is %d", invYarnFailures,
			err, m.failures, m.max)
	case code != cluster.ExitMaxExecutorFailures && m.reachedAt >= 0:
		w.fail("%s: %d containers failed by %s (maximum %d), and the application master exited with %v", invYarnFailures,
			m.failures, fmtDur(m.reachedAt), m.max, err)
	}
}

// checkAppFailure checks a job that failed because the application ended:
// only an application master that exited for too many executor failures
// ends it while the driver runs.
func (y *yarnCluster) checkAppFailure(j *job, err error) {
	if !strings.Contains(err.Error(), "Max number of executor failures") {
		y.w.fail("%s: job %d failed with an unexpected end of the application: %v", invJobResult, j.idx, err)
	}
}

// checkNoContainers waits, once the application has ended and its
// application master exited, until the resource manager holds no
// container on any node, as every container has ended.
func (y *yarnCluster) checkNoContainers(ctx context.Context, client *rmclient.Client) {
	w := y.w
	w.stats.check(invYarnLeftovers)
	deadline := time.Now().Add(y.cfg.nmHeartbeat*4 + 10*time.Second)
	var left []string
	for {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		nodes, err := client.Nodes(qctx)
		cancel()
		left = left[:0]
		for _, n := range nodes {
			if n.GetState() != "LOST" && n.GetNumContainers() > 0 {
				left = append(left, fmt.Sprintf("%s has %d", n.GetNodeId(), n.GetNumContainers()))
			}
		}
		if err == nil && len(left) == 0 || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	w.fail("%s: after the application ended, the resource manager still holds containers: %s", invYarnLeftovers,
		strings.Join(left, ", "))
}
