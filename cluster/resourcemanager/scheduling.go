package resourcemanager

// This file holds the resource manager core's scheduler: where AM and
// executor containers go, and the containers an application master's
// heartbeat gets or releases.

import (
	"fmt"
	"slices"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// schedule places the AM containers of accepted applications, first come
// first served.
func (c *rmCore) schedule() []rmAction {
	var acts []rmAction
	for _, id := range c.appOrder {
		a := c.apps[id]
		if a.state != cluster.StateAccepted || a.amContainer != nil {
			continue
		}
		n := c.pickNode(a.amResource, true)
		if n == nil {
			continue
		}
		ct := c.allocate(a, n, a.amResource)
		ct.am, ct.launched = true, true
		a.amContainer, a.amSeen = ct, c.now()
		acts = append(acts, rmAction{kind: actStartContainer, nodeAddress: n.address, appID: a.id,
			start: &messages.NmStartContainer{Container: c.containerProto(ct), AppId: a.id, LaunchContext: a.amLaunch}})
	}
	return acts
}

// pickNode returns the live node with the most free memory that fits res
// (spreading containers), or nil. An AM container (am) goes to a node
// reserved for application masters when one has room, else to any node; an
// executor container never goes to a reserved node.
func (c *rmCore) pickNode(res cluster.Resource, am bool) *rmNode {
	if am && len(c.amNodes) > 0 {
		if n := c.pickNodeAmong(res, true); n != nil {
			return n
		}
	}
	return c.pickNodeAmong(res, false)
}

// pickNodeAmong is pickNode among the nodes reserved for application
// masters (reserved) or the others.
func (c *rmCore) pickNodeAmong(res cluster.Resource, reserved bool) *rmNode {
	var best *rmNode
	for _, id := range c.nodeOrder {
		n := c.nodes[id]
		if n.lost || c.amNodes[id] != reserved || !res.Fits(n.capability.Sub(n.used)) {
			continue
		}
		if best == nil || n.capability.MemoryMB-n.used.MemoryMB > best.capability.MemoryMB-best.used.MemoryMB {
			best = n
		}
	}
	return best
}

func (c *rmCore) allocate(a *rmApp, n *rmNode, res cluster.Resource) *rmContainer {
	a.nextContainer++
	ct := &rmContainer{id: cluster.ContainerID(c.clusterTimestamp, a.seq, 1, a.nextContainer), app: a, node: n, resource: res}
	n.used = n.used.Add(res)
	n.containers[ct.id] = ct
	a.containers[ct.id] = ct
	return ct
}

// free gives a container's resources back to its node and forgets it:
// for a container that no node manager started, which no heartbeat will
// report complete.
func (c *rmCore) free(ct *rmContainer) {
	delete(ct.node.containers, ct.id)
	ct.node.used = ct.node.used.Sub(ct.resource)
	delete(ct.app.containers, ct.id)
	if ct.app.state.Terminal() {
		c.pruneEnded()
	}
}

func (c *rmCore) containerProto(ct *rmContainer) *messages.RmContainer {
	return &messages.RmContainer{ContainerId: ct.id, NodeId: ct.node.id, NodeAddress: ct.node.address,
		NodeHost: ct.node.host, Resource: ct.resource.Proto()}
}

// allocateFor handles an AM heartbeat.
func (c *rmCore) allocateFor(req *messages.AmAllocate) (*messages.AmAllocateResponse, []rmAction, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, nil, err
	}
	if a.state != cluster.StateRunning {
		if a.state.Terminal() {
			return &messages.AmAllocateResponse{Shutdown: true}, nil, nil
		}
		return nil, nil, fmt.Errorf("%w: application %s is %s; its application master has not registered", cluster.ErrInvalidState, a.id, a.state)
	}
	a.amSeen = c.now()
	// An ask no node could ever hold is refused, as a submission's AM
	// is (YARN's InvalidResourceRequestException), before anything of the
	// heartbeat is taken: the AM gives up with the error instead of
	// waiting for ever. Nodes lost or shut down and still listed count, as
	// they may come back; with none at all, the AM waits for some.
	if ask := cluster.ResourceFromProto(req.GetResource()); req.GetNumPending() > 0 && ask.MemoryMB > 0 && ask.Cores > 0 {
		if m := c.maxExecutorResource(true); m != (cluster.Resource{}) && !ask.Fits(m) {
			return nil, nil, &cluster.ResourceTooLargeError{What: "executor", Requested: ask, Max: m}
		}
	}
	if !a.unmanagedDriver { // a client-mode driver reports its tasks itself (RmTaskProgress)
		a.tasksTotal, a.tasksDone, a.tasksRunning = req.GetTasksTotal(), req.GetTasksDone(), req.GetTasksRunning()
	}
	acts := c.release(a, req.GetRelease())
	a.pending = max(0, int(req.GetNumPending()))
	a.pendingResource = cluster.ResourceFromProto(req.GetResource())
	resp := &messages.AmAllocateResponse{}
	expect := req.GetExpectedResponseId()
	var unheard []string
	if missed := a.lastReply; expect > 0 && missed != nil && expect <= a.lastReplyID {
		unheard = c.resend(a, missed, resp)
	}
	if a.pendingResource.MemoryMB > 0 && a.pendingResource.Cores > 0 {
		for a.pending > 0 {
			n := c.pickNode(a.pendingResource, false)
			if n == nil {
				break
			}
			ct := c.allocate(a, n, a.pendingResource)
			a.pending--
			resp.Allocated = append(resp.Allocated, c.containerProto(ct))
		}
	}
	for _, st := range a.completed {
		if !slices.Contains(unheard, st.GetContainerId()) {
			resp.Completed = append(resp.Completed, st)
		}
	}
	a.completed = nil
	resp.NumClusterNodes = int32(c.liveNodes())
	if expect > 0 {
		a.lastReplyID++
		resp.ResponseId = a.lastReplyID
		a.lastReply = resp
	}
	return resp, acts, nil
}

// release gives back the containers ids of a that its AM released: an
// unstarted one at once, a started one by a stop of its node manager.
func (c *rmCore) release(a *rmApp, ids []string) []rmAction {
	var acts []rmAction
	for _, id := range ids {
		ct, ok := a.containers[id]
		switch {
		case !ok || ct.am:
		case !ct.launched: // given back unused: its node manager never heard of it
			c.free(ct)
		default:
			// Stopped now, and killed by its node's heartbeats should
			// this stop be lost (releasedKillAfter).
			ct.releasedAt = c.now()
			acts = append(acts, rmAction{kind: actStopContainer, nodeAddress: ct.node.address, appID: a.id,
				stop: &messages.NmStopContainer{ContainerId: id, ExitStatus: cluster.ContainerExitKilledByAM, Diagnostics: "Container released by the application master"}})
		}
	}
	return acts
}

// resend puts in resp what missed, the last reply to a's AM, carried and
// the AM did not receive (YARN's responseId): its containers still
// allocated and not started, which the AM's ask counted as pending, and
// its completed ones. It returns the containers of missed that completed
// since (their node was lost), which the AM never hears of.
func (c *rmCore) resend(a *rmApp, missed, resp *messages.AmAllocateResponse) (unheard []string) {
	for _, p := range missed.GetAllocated() {
		if ct, ok := a.containers[p.GetContainerId()]; ok && !ct.launched {
			resp.Allocated = append(resp.Allocated, c.containerProto(ct))
			a.pending = max(0, a.pending-1)
		} else {
			unheard = append(unheard, p.GetContainerId())
		}
	}
	resp.Completed = slices.Clone(missed.GetCompleted())
	return unheard
}

// startExecutor checks that container id was allocated to the running
// application appID, is not its AM's and was not started yet, and returns
// the start to ask of its node manager: lc with the application's secret,
// ACLs and staged resources, which only the resource manager sets.
func (c *rmCore) startExecutor(appID, id string, lc *messages.RmLaunchContext) (rmAction, error) {
	a, err := c.app(appID)
	if err != nil {
		return rmAction{}, err
	}
	if a.state != cluster.StateRunning {
		return rmAction{}, fmt.Errorf("%w: application %s is %s; only a running application starts containers", cluster.ErrInvalidState, a.id, a.state)
	}
	ct, ok := a.containers[id]
	if !ok || ct.am {
		return rmAction{}, fmt.Errorf("%w: container %s is not allocated to application %s", cluster.ErrPermissionDenied, id, a.id)
	}
	if ct.launched {
		return rmAction{}, fmt.Errorf("%w: container %s of application %s was already started", cluster.ErrInvalidState, id, a.id)
	}
	ct.launched = true
	out := &messages.RmLaunchContext{Command: lc.GetCommand(), Environment: lc.GetEnvironment(), Files: lc.GetFiles(),
		Secret: a.secret, Acls: a.acls, Resources: a.resources}
	return rmAction{kind: actStartContainer, nodeAddress: ct.node.address, appID: a.id,
		start: &messages.NmStartContainer{Container: c.containerProto(ct), AppId: a.id, LaunchContext: out}}, nil
}

func (c *rmCore) stopAction(ct *rmContainer, status int32, diag string) rmAction {
	return rmAction{kind: actStopContainer, nodeAddress: ct.node.address, appID: ct.app.id,
		stop: &messages.NmStopContainer{ContainerId: ct.id, ExitStatus: status, Diagnostics: diag}}
}
