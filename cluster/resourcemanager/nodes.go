package resourcemanager

// This file holds the resource manager core's view of the nodes: their
// registration, heartbeats, completed containers and expiry.

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// registerNode adds a node, or resets a node that registers again (its old
// containers are lost).
func (c *rmCore) registerNode(req *messages.NmRegister) []rmAction {
	var acts []rmAction
	if old, ok := c.nodes[req.GetNodeId()]; ok {
		acts = append(acts, c.loseNode(old, "Container released on a node that registered again: "+old.id)...)
		delete(c.nodes, old.id)
		c.nodeOrder = slices.DeleteFunc(c.nodeOrder, func(s string) bool { return s == old.id })
	}
	n := &rmNode{id: req.GetNodeId(), address: req.GetAddress(), host: req.GetHost(),
		capability: cluster.ResourceFromProto(req.GetCapability()), containers: make(map[string]*rmContainer), lastSeen: c.now()}
	c.nodes[n.id] = n
	c.nodeOrder = append(c.nodeOrder, n.id)
	return append(acts, c.schedule()...)
}

// heartbeat records a node's liveness and its completed containers, and
// tells it which of the applications whose resources it keeps have ended.
func (c *rmCore) heartbeat(req *messages.NmHeartbeat) (*messages.NmHeartbeatResponse, []rmAction) {
	n, ok := c.nodes[req.GetNodeId()]
	if !ok || n.lost {
		return &messages.NmHeartbeatResponse{Resync: true}, nil
	}
	n.lastSeen = c.now()
	var acts []rmAction
	for _, st := range req.GetCompleted() {
		if _, ok := n.containers[st.GetContainerId()]; ok { // a node reports its own containers only
			acts = append(acts, c.containerCompleted(st)...)
		}
	}
	resp := &messages.NmHeartbeatResponse{}
	for _, id := range req.GetCachedApps() {
		if a, ok := c.apps[id]; !ok || a.state.Terminal() {
			resp.FinishedApps = append(resp.FinishedApps, id)
		}
	}
	for _, id := range req.GetRunning() {
		ct, ok := n.containers[id]
		if !ok || ct.stopLost(c.now()) || ct.app.state.Terminal() && (!ct.am || !c.now().Before(ct.app.amStopAt)) {
			resp.Kill = append(resp.Kill, id)
		}
	}
	return resp, append(acts, c.schedule()...)
}

// containerCompleted frees a container's resources and reports it to its
// application; an AM container that ends before its application fails it.
func (c *rmCore) containerCompleted(st *messages.RmContainerStatus) []rmAction {
	var ct *rmContainer
	for _, n := range c.nodes {
		if x, ok := n.containers[st.GetContainerId()]; ok {
			ct = x
			break
		}
	}
	if ct == nil {
		return nil
	}
	a := ct.app
	delete(ct.node.containers, ct.id)
	ct.node.used = ct.node.used.Sub(ct.resource)
	delete(a.containers, ct.id)
	if a.state.Terminal() {
		c.pruneEnded() // it may have waited for this container
		return nil
	}
	if ct.am {
		diag := fmt.Sprintf("Application %s failed 1 times due to AM Container for %s exited with exitCode: %d", a.id, ct.id, st.GetExitStatus())
		if d := st.GetDiagnostics(); d != "" {
			diag += "\n" + d
		}
		return c.finishApp(a, cluster.StateFailed, cluster.FinalFailed, diag, true)
	}
	a.completed = append(a.completed, &messages.RmContainerStatus{ContainerId: ct.id, State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE,
		ExitStatus: st.GetExitStatus(), Diagnostics: st.GetDiagnostics()})
	return nil
}

// checkNodes marks nodes not heard from within expiry as lost and kills AM
// containers that outlived their application's grace.
func (c *rmCore) checkNodes(expiry time.Duration) []rmAction {
	var acts []rmAction
	now := c.now()
	for _, id := range c.nodeOrder {
		n := c.nodes[id]
		if !n.lost && now.Sub(n.lastSeen) > expiry {
			acts = append(acts, c.loseNode(n, fmt.Sprintf("Container released on a *lost* node %s (no heartbeat for %s)", n.id, now.Sub(n.lastSeen).Round(time.Millisecond)))...)
			n.lost, n.inactiveSince = true, now
		}
	}
	// A node manager restarted on a new port is a new node: the old one
	// is forgotten once it has been listed lost or shut down for
	// nodeRetention (its next heartbeat, if any, is told to register).
	forget := false
	for _, id := range c.nodeOrder {
		n := c.nodes[id]
		if n.lost && len(n.containers) == 0 && now.Sub(n.inactiveSince) > c.nodeRetention {
			delete(c.nodes, id)
			forget = true
		}
	}
	if forget {
		c.nodeOrder = slices.DeleteFunc(slices.Clone(c.nodeOrder), func(id string) bool { return c.nodes[id] == nil })
	}
	for _, id := range c.appOrder {
		a := c.apps[id]
		if a.state.Terminal() && a.amContainer != nil && !a.amStopAt.IsZero() && !now.Before(a.amStopAt) {
			if ct, ok := a.containers[a.amContainer.id]; ok {
				acts = append(acts, c.stopAction(ct, cluster.ContainerExitAfterAppDone, "Container killed after the application ended"))
			}
			a.amStopAt = time.Time{}
		}
	}
	return append(acts, c.schedule()...)
}

// unregisterNode takes a node that is shutting down out of the cluster:
// it is SHUTDOWN, runs nothing more, and the containers it still had are
// reported failed. A node that is not registered, or already lost, has
// nothing to change (ok false).
func (c *rmCore) unregisterNode(id string) (acts []rmAction, ok bool) {
	n, ok := c.nodes[id]
	if !ok || n.lost {
		return nil, false
	}
	acts = c.loseNode(n, "Container released on a node that shut down: "+n.id)
	n.lost, n.shutdown, n.inactiveSince = true, true, c.now()
	return append(acts, c.schedule()...), true
}

func (c *rmCore) loseNode(n *rmNode, diag string) []rmAction {
	ids := make([]string, 0, len(n.containers))
	for id := range n.containers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var acts []rmAction
	for _, id := range ids {
		acts = append(acts, c.containerCompleted(&messages.RmContainerStatus{ContainerId: id,
			State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: cluster.ContainerExitAborted, Diagnostics: diag})...)
	}
	return acts
}

func (c *rmCore) nodeReports() []*messages.RmNodeReport {
	var out []*messages.RmNodeReport
	for _, id := range c.nodeOrder {
		n := c.nodes[id]
		state := "RUNNING"
		switch {
		case n.shutdown:
			state = "SHUTDOWN"
		case n.lost:
			state = "LOST"
		}
		out = append(out, &messages.RmNodeReport{NodeId: n.id, Address: n.address, Host: n.host,
			Capability: n.capability.Proto(), Used: n.used.Proto(), State: state, NumContainers: int32(len(n.containers)),
			LastHeartbeatMs: n.lastSeen.UnixMilli()})
	}
	return out
}

// releasedKillAfter is how long after its release a container its node
// still reports running is taken for one whose stop was lost, and killed
// by the node's heartbeat. Not at once: the stop, which carries the AM's
// exit status (ContainerExitKilledByAM), is on its way, and a kill that
// overtook it would report the container killed by the resource manager.
const releasedKillAfter = 30 * time.Second

// stopLost reports whether ct was released by its AM releasedKillAfter
// ago or more, and so should have stopped by now.
func (ct *rmContainer) stopLost(now time.Time) bool {
	return !ct.releasedAt.IsZero() && now.Sub(ct.releasedAt) >= releasedKillAfter
}
