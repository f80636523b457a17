package resourcemanager

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// checkCoreInvariants checks what must hold between any two operations of
// the core: a node's used resources are the sum of its containers, within
// its capability; containers are on live nodes and known both to their
// node and to their application; an ended application whose containers
// completed holds nothing.
func checkCoreInvariants(t *testing.T, c *rmCore, step string) {
	t.Helper()
	for id, n := range c.nodes {
		var sum cluster.Resource
		for cid, ct := range n.containers {
			sum = sum.Add(ct.resource)
			if ct.node != n {
				t.Fatalf("%s: container %s listed on node %s points at node %s", step, cid, id, ct.node.id)
			}
			if n.lost {
				t.Fatalf("%s: lost node %s holds container %s", step, id, cid)
			}
			if ct.app.containers[cid] != ct {
				t.Fatalf("%s: container %s on node %s is not its application's", step, cid, id)
			}
			if c.apps[ct.app.id] != ct.app {
				t.Fatalf("%s: container %s belongs to forgotten application %s", step, cid, ct.app.id)
			}
		}
		if sum != n.used {
			t.Fatalf("%s: node %s used %+v, its containers sum to %+v", step, id, n.used, sum)
		}
		if n.used.MemoryMB < 0 || n.used.Cores < 0 || !n.used.Fits(n.capability) {
			t.Fatalf("%s: node %s used %+v of %+v", step, id, n.used, n.capability)
		}
	}
	if len(c.appOrder) != len(c.apps) {
		t.Fatalf("%s: %d ids in appOrder, %d applications", step, len(c.appOrder), len(c.apps))
	}
	for _, id := range c.appOrder {
		a := c.apps[id]
		if a == nil {
			t.Fatalf("%s: appOrder names forgotten %s", step, id)
		}
		for cid, ct := range a.containers {
			if c.nodes[ct.node.id] != ct.node || ct.node.containers[cid] != ct {
				t.Fatalf("%s: container %s of %s is not on its node %s", step, cid, id, ct.node.id)
			}
			if a.state.Terminal() && !ct.launched {
				t.Fatalf("%s: ended %s holds container %s never started", step, id, cid)
			}
		}
		if a.state.Terminal() && a.pending != 0 {
			t.Fatalf("%s: ended %s has %d pending", step, id, a.pending)
		}
	}
	if len(c.nodeOrder) != len(c.nodes) {
		t.Fatalf("%s: %d ids in nodeOrder, %d nodes", step, len(c.nodeOrder), len(c.nodes))
	}
}

// TestSchedulingPropertiesRandomized drives the core with a seeded random
// mix of submissions, AM heartbeats, starts, releases, kills,
// unregistrations, node registrations, heartbeats (with late, repeated and
// unknown completions), start failures, node shutdowns and expiries, and
// checks the invariants after every step and that no container is handed
// out twice.
// Before, the seeds that lose replies found containers no AM would hear of.
func TestSchedulingPropertiesRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSchedulingSim(t, seed, 600) })
	}
}

func runSchedulingSim(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	c, clk := newTestCore(t)
	c.maxCompleted = 5
	const expiry = time.Minute
	nodePort := 20000
	addNode := func(id string) {
		if id == "" {
			nodePort++
			id = fmt.Sprintf("127.0.0.1:%d", nodePort)
		}
		capa := cluster.Resource{MemoryMB: int64(1024 * (1 + r.IntN(4))), Cores: 2 + r.IntN(6)}
		c.registerNode(&messages.NmRegister{NodeId: id, Address: id, Host: "127.0.0.1", Capability: capa.Proto()})
	}
	for range 3 {
		addNode("")
	}
	handed := map[string]string{} // container id -> app it went to
	ams := map[string]*amModel{}
	var allContainers []string
	ids := func() []string { return slices.Clone(c.appOrder) }
	pick := func(xs []string) string {
		if len(xs) == 0 {
			return ""
		}
		return xs[r.IntN(len(xs))]
	}
	liveNodes := func() []string {
		var out []string
		for _, id := range c.nodeOrder {
			if !c.nodes[id].lost {
				out = append(out, id)
			}
		}
		return out
	}
	res := func() cluster.Resource {
		return cluster.Resource{MemoryMB: int64(256 * (1 + r.IntN(6))), Cores: 1 + r.IntN(3)}
	}
	noteStarts := func(acts []rmAction) {
		for _, a := range acts {
			if a.kind == actStartContainer {
				cid := a.start.GetContainer().GetContainerId()
				if prev, ok := handed[cid]; ok && prev != a.appID {
					t.Fatalf("container %s started for %s and %s", cid, prev, a.appID)
				}
				handed[cid] = a.appID
				allContainers = append(allContainers, cid)
			}
		}
	}
	for step := range steps {
		op := r.IntN(20)
		if op >= 14 {
			op = []int{2, 3, 4, 5, 8, 9}[op-14]
		}
		desc := fmt.Sprintf("seed %d step %d op %d", seed, step, op)
		switch op {
		case 0, 1: // submit
			id, _, err := c.newApplication()
			if err != nil {
				break
			}
			queue := ""
			if r.IntN(10) == 0 {
				queue = "nope"
			}
			acts, err := c.submit(&messages.RmSubmitApplication{AppId: id, Queue: queue, AmResource: res().Proto(),
				AmLaunchContext: &messages.RmLaunchContext{Command: []string{"sparkrpc", "am"}}})
			if err == nil {
				c.apps[id].staged = true
			}
			noteStarts(acts)
		case 2: // AM registers
			for _, id := range ids() {
				if a := c.apps[id]; a.state == cluster.StateAccepted && a.amContainer != nil && r.IntN(2) == 0 {
					if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
						t.Fatalf("%s: register %s: %v", desc, id, err)
					}
				}
			}
		case 3, 4: // AM heartbeat, mostly of running applications
			var running []string
			for _, id := range ids() {
				if c.apps[id].state == cluster.StateRunning {
					running = append(running, id)
				}
			}
			id := pick(running)
			if id == "" || r.IntN(5) == 0 {
				id = pick(ids())
			}
			if id == "" {
				break
			}
			var release []string
			for range r.IntN(3) {
				release = append(release, pick(allContainers))
			}
			if a := c.apps[id]; a != nil {
				for cid := range a.containers {
					if r.IntN(4) == 0 {
						release = append(release, cid)
					}
				}
			}
			req := &messages.AmAllocate{AppId: id, NumPending: int32(r.IntN(6)), Resource: res().Proto(), Release: release}
			am := ams[id]
			if am == nil && seed%2 == 0 { // half the seeds track replies, and lose some
				am = &amModel{known: map[string]bool{}, done: map[string]bool{}}
				ams[id] = am
			}
			if am != nil {
				expectResponse(req, am.replies+1)
				for _, cid := range release {
					am.done[cid] = true // given back: the AM is done with it
				}
			}
			resp, acts, err := c.allocateFor(req)
			if err != nil {
				break
			}
			noteStarts(acts)
			if am != nil {
				if r.IntN(3) == 0 {
					am.missed = resp // the reply is lost
					break
				}
				am.missed = nil
				am.replies = responseID(resp)
				for _, ct := range resp.GetAllocated() {
					cid := ct.GetContainerId()
					if am.known[cid] {
						t.Fatalf("%s: %s received container %s twice", desc, id, cid)
					}
					if a := c.apps[id]; a == nil || a.containers[cid] == nil {
						t.Fatalf("%s: %s received container %s, which is not its", desc, id, cid)
					}
					am.known[cid] = true
					handed[cid] = id
					allContainers = append(allContainers, cid)
				}
				for _, st := range resp.GetCompleted() {
					if handed[st.GetContainerId()] != id {
						t.Fatalf("%s: %s told of container %s, which is %q's", desc, id, st.GetContainerId(), handed[st.GetContainerId()])
					}
					am.done[st.GetContainerId()] = true
				}
				break
			}
			for _, ct := range resp.GetAllocated() {
				cid := ct.GetContainerId()
				if prev, ok := handed[cid]; ok {
					t.Fatalf("%s: container %s handed to %s again (before: %s)", desc, cid, id, prev)
				}
				handed[cid] = id
				allContainers = append(allContainers, cid)
				n := c.nodes[ct.GetNodeId()]
				if n == nil || n.lost {
					t.Fatalf("%s: container %s on a node that is not live", desc, cid)
				}
			}
			for _, st := range resp.GetCompleted() {
				if handed[st.GetContainerId()] != id {
					t.Fatalf("%s: %s told of container %s, which is %q's", desc, id, st.GetContainerId(), handed[st.GetContainerId()])
				}
			}
		case 5: // AM starts executors
			id := pick(ids())
			a := c.apps[id]
			if a == nil {
				break
			}
			cids := make([]string, 0, len(a.containers))
			for cid := range a.containers {
				if am := ams[id]; am == nil || am.known[cid] { // an AM starts what it was given
					cids = append(cids, cid)
				}
			}
			sort.Strings(cids)
			if ams[id] == nil {
				cids = append(cids, pick(allContainers))
			}
			for _, cid := range cids {
				if r.IntN(2) == 0 {
					continue
				}
				act, err := c.startExecutor(id, cid, &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"}})
				if err == nil {
					if handed[cid] != id {
						t.Fatalf("%s: %s started container %s of %q", desc, id, cid, handed[cid])
					}
					noteStarts([]rmAction{act})
				}
			}
		case 6: // unregister
			id := pick(ids())
			if id == "" {
				break
			}
			acts, _ := c.unregisterAM(&messages.AmUnregister{AppId: id, FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED})
			noteStarts(acts)
		case 7: // kill
			id := pick(ids())
			if id == "" {
				break
			}
			_, _, acts, _ := c.kill(id, "")
			noteStarts(acts)
		case 8, 9: // node heartbeat: some of its containers complete, late and repeated reports, unknown ones
			nid := pick(liveNodes())
			if nid == "" {
				break
			}
			n := c.nodes[nid]
			var completed []*messages.RmContainerStatus
			var running []string
			for cid, ct := range n.containers {
				if ct.launched && r.IntN(3) == 0 {
					completed = append(completed, &messages.RmContainerStatus{ContainerId: cid, ExitStatus: int32(r.IntN(3))})
				} else if ct.launched {
					running = append(running, cid)
				}
			}
			for range r.IntN(3) {
				cid := pick(allContainers)
				completed = append(completed, &messages.RmContainerStatus{ContainerId: cid, ExitStatus: 1})
				running = append(running, cid)
			}
			if len(completed) > 0 && r.IntN(2) == 0 {
				completed = append(completed, completed[0]) // twice
			}
			sort.Slice(completed, func(i, j int) bool { return completed[i].GetContainerId() < completed[j].GetContainerId() })
			sort.Strings(running)
			_, acts := c.heartbeat(&messages.NmHeartbeat{NodeId: nid, Completed: completed, Running: running})
			noteStarts(acts)
		case 10: // a start failed
			cid := pick(allContainers)
			if cid == "" {
				break
			}
			acts := c.containerCompleted(&messages.RmContainerStatus{ContainerId: cid, ExitStatus: cluster.ContainerExitInvalid})
			acts = append(acts, c.schedule()...)
			noteStarts(acts)
		case 11: // a node joins, or one registers again
			if r.IntN(2) == 0 {
				addNode("")
			} else if nid := pick(c.nodeOrder); nid != "" {
				addNode(nid)
			}
		case 12: // a node shuts down
			if nid := pick(liveNodes()); nid != "" && len(liveNodes()) > 1 {
				acts, _ := c.unregisterNode(nid)
				noteStarts(acts)
			}
		case 13: // time passes: the others heartbeat, one may be lost
			clk.t = clk.t.Add(expiry / 2)
			for _, nid := range liveNodes() {
				if r.IntN(5) != 0 {
					c.nodes[nid].lastSeen = clk.t
				}
			}
			clk.t = clk.t.Add(expiry/2 + time.Second)
			noteStarts(c.checkNodes(expiry))
		}
		checkCoreInvariants(t, c, desc)
		// What an AM that tracks replies did not receive waits for it: the
		// containers allocated to it and not started are known to it or in
		// the reply it missed, and those it knew that completed were
		// reported to it or wait to be.
		for id, am := range ams {
			a := c.apps[id]
			if a == nil || a.state != cluster.StateRunning {
				continue
			}
			waiting := map[string]bool{}
			if am.missed != nil {
				for _, ct := range am.missed.GetAllocated() {
					waiting[ct.GetContainerId()] = true
				}
				for _, st := range am.missed.GetCompleted() {
					waiting[st.GetContainerId()] = true
				}
			}
			for _, st := range a.completed {
				waiting[st.GetContainerId()] = true
			}
			for cid, ct := range a.containers {
				if !ct.am && !ct.launched && !am.known[cid] && !waiting[cid] {
					t.Fatalf("%s: container %s of %s is allocated, and its AM will never hear of it", desc, cid, id)
				}
			}
			for cid := range am.known {
				if a.containers[cid] == nil && !am.done[cid] && !waiting[cid] {
					t.Fatalf("%s: container %s of %s completed, and its AM will never hear of it", desc, cid, id)
				}
			}
		}
	}
}

// amModel is what an application master that tracks allocate replies
// knows: the replies it received, the containers they gave it and those
// they reported complete.
type amModel struct {
	replies     int64
	known, done map[string]bool
	missed      *messages.AmAllocateResponse // the last reply, lost
}
