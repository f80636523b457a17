package cluster

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// rmCore is the resource manager's state machine and scheduler. It does no
// I/O: every operation returns the actions (start or stop a container on a
// node, remove a staging folder) that the resource manager endpoint carries
// out. It is not safe for concurrent use; the endpoint serialises calls.
type rmCore struct {
	clusterTimestamp int64
	nextApp          int
	queues           map[string]bool
	now              func() time.Time
	nodes            map[string]*rmNode
	nodeOrder        []string
	apps             map[string]*rmApp
	appOrder         []string
	amStopGrace      time.Duration
	// amNodes are reserved for application masters: AM containers go there
	// first, executor containers never.
	amNodes map[string]bool
}

type rmNode struct {
	id, address, host string
	capability, used  Resource
	containers        map[string]*rmContainer
	lastSeen          time.Time
	lost              bool
}

type rmContainer struct {
	id       string
	app      *rmApp
	node     *rmNode
	resource Resource
	am       bool
}

type rmApp struct {
	id, name, queue, user string
	seq                   int
	state                 AppState
	final                 FinalStatus
	diagnostics           string
	start, finish         time.Time
	amResource            Resource
	amLaunch              *messages.RmLaunchContext
	amContainer           *rmContainer
	amHost, driverURL     string
	amRef                 *messages.EndpointRef
	amStopAt              time.Time
	unmanagedDriver       bool
	nextContainer         int
	pending               int
	pendingResource       Resource
	containers            map[string]*rmContainer
	completed             []*messages.RmContainerStatus
	tasksTotal, tasksDone int32
	tasksRunning          int32
	amLogDir              string
	staged                bool
}

type actionKind int

const (
	actStartContainer actionKind = iota + 1
	actStopContainer
	actRemoveStaging
)

// rmAction is an effect the endpoint must carry out.
type rmAction struct {
	kind        actionKind
	nodeAddress string
	appID       string
	start       *messages.NmStartContainer
	stop        *messages.NmStopContainer
}

func newRMCore(clusterTimestamp int64, queues []string, now func() time.Time) *rmCore {
	q := make(map[string]bool)
	for _, name := range queues {
		q[name] = true
	}
	if len(q) == 0 {
		q["default"] = true
	}
	return &rmCore{
		clusterTimestamp: clusterTimestamp,
		queues:           q,
		now:              now,
		nodes:            make(map[string]*rmNode),
		apps:             make(map[string]*rmApp),
		amStopGrace:      10 * time.Second,
		amNodes:          make(map[string]bool),
	}
}

// maxResource is the capability of the largest live node (memory and cores
// taken separately, as YARN's maximum allocation).
func (c *rmCore) maxResource() Resource {
	var m Resource
	for _, n := range c.nodes {
		if n.lost {
			continue
		}
		m.MemoryMB = max(m.MemoryMB, n.capability.MemoryMB)
		m.Cores = max(m.Cores, n.capability.Cores)
	}
	return m
}

func (c *rmCore) liveNodes() int {
	k := 0
	for _, n := range c.nodes {
		if !n.lost {
			k++
		}
	}
	return k
}

func (c *rmCore) app(id string) (*rmApp, error) {
	a, ok := c.apps[id]
	if !ok {
		return nil, fmt.Errorf("%w: Application with id '%s' doesn't exist in RM", ErrUnknownApplication, id)
	}
	return a, nil
}

// newApplication creates an application in state NEW.
func (c *rmCore) newApplication() (string, Resource) {
	c.nextApp++
	id := AppID(c.clusterTimestamp, c.nextApp)
	a := &rmApp{id: id, seq: c.nextApp, state: StateNew, final: FinalUndefined, start: c.now(),
		containers: make(map[string]*rmContainer)}
	c.apps[id] = a
	c.appOrder = append(c.appOrder, id)
	return id, c.maxResource()
}

// submit moves a NEW application to SUBMITTED and then ACCEPTED, and
// schedules its AM container when a node has room.
func (c *rmCore) submit(req *messages.RmSubmitApplication) ([]rmAction, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state != StateNew {
		return nil, fmt.Errorf("%w: application %s is already %s", ErrInvalidState, a.id, a.state)
	}
	queue := req.GetQueue()
	if queue == "" {
		queue = "default"
	}
	if !c.queues[queue] {
		return nil, fmt.Errorf("%w: Application %s submitted by user %s to unknown queue: %s", ErrUnknownQueue, a.id, req.GetUser(), queue)
	}
	res := resourceFromProto(req.GetAmResource())
	if res.MemoryMB <= 0 || res.Cores <= 0 {
		return nil, fmt.Errorf("%w: the AM must ask for positive memory and cores, not %d MB and %d cores", ErrResourceTooLarge, res.MemoryMB, res.Cores)
	}
	if maxRes := c.maxResource(); !res.Fits(maxRes) {
		return nil, &ResourceTooLargeError{What: "AM", Requested: res, Max: maxRes}
	}
	a.name, a.queue, a.user = req.GetName(), queue, req.GetUser()
	a.amResource = res
	a.amLaunch = req.GetAmLaunchContext()
	a.unmanagedDriver = req.GetUnmanagedDriver()
	// SUBMITTED, then at once ACCEPTED: the scheduler has no admission
	// control beyond the checks above.
	a.state = StateSubmitted
	a.state = StateAccepted
	return c.schedule(), nil
}

// schedule places the AM containers of accepted applications, first come
// first served.
func (c *rmCore) schedule() []rmAction {
	var acts []rmAction
	for _, id := range c.appOrder {
		a := c.apps[id]
		if a.state != StateAccepted || a.amContainer != nil {
			continue
		}
		n := c.pickNode(a.amResource, true)
		if n == nil {
			continue
		}
		ct := c.allocate(a, n, a.amResource)
		ct.am = true
		a.amContainer = ct
		acts = append(acts, rmAction{kind: actStartContainer, nodeAddress: n.address, appID: a.id,
			start: &messages.NmStartContainer{Container: c.containerProto(ct), AppId: a.id, LaunchContext: a.amLaunch}})
	}
	return acts
}

// pickNode returns the live node with the most free memory that fits res
// (spreading containers), or nil. An AM container (am) goes to a node
// reserved for application masters when one has room, else to any node; an
// executor container never goes to a reserved node.
func (c *rmCore) pickNode(res Resource, am bool) *rmNode {
	if am && len(c.amNodes) > 0 {
		if n := c.pickNodeAmong(res, true); n != nil {
			return n
		}
	}
	return c.pickNodeAmong(res, false)
}

// pickNodeAmong is pickNode among the nodes reserved for application
// masters (reserved) or the others.
func (c *rmCore) pickNodeAmong(res Resource, reserved bool) *rmNode {
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

func (c *rmCore) allocate(a *rmApp, n *rmNode, res Resource) *rmContainer {
	a.nextContainer++
	ct := &rmContainer{id: containerID(c.clusterTimestamp, a.seq, 1, a.nextContainer), app: a, node: n, resource: res}
	n.used = n.used.Add(res)
	n.containers[ct.id] = ct
	a.containers[ct.id] = ct
	return ct
}

func (c *rmCore) containerProto(ct *rmContainer) *messages.RmContainer {
	return &messages.RmContainer{ContainerId: ct.id, NodeId: ct.node.id, NodeAddress: ct.node.address,
		NodeHost: ct.node.host, Resource: ct.resource.proto()}
}

// registerAM moves an ACCEPTED application whose AM container runs to RUNNING.
func (c *rmCore) registerAM(req *messages.AmRegister) (*messages.AmRegisterResponse, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state != StateAccepted || a.amContainer == nil {
		return nil, fmt.Errorf("%w: application %s is %s; an application master can register only while it is ACCEPTED", ErrInvalidState, a.id, a.state)
	}
	a.state = StateRunning
	a.amHost, a.driverURL, a.amRef = req.GetHost(), req.GetDriverUrl(), req.GetAm()
	return &messages.AmRegisterResponse{MaxResource: c.maxResource().proto(), Queue: a.queue}, nil
}

// allocateFor handles an AM heartbeat.
func (c *rmCore) allocateFor(req *messages.AmAllocate) (*messages.AmAllocateResponse, []rmAction, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, nil, err
	}
	if a.state != StateRunning {
		if a.state.Terminal() {
			return &messages.AmAllocateResponse{Shutdown: true}, nil, nil
		}
		return nil, nil, fmt.Errorf("%w: application %s is %s; its application master has not registered", ErrInvalidState, a.id, a.state)
	}
	if !a.unmanagedDriver { // a client-mode driver reports its tasks itself (RmTaskProgress)
		a.tasksTotal, a.tasksDone, a.tasksRunning = req.GetTasksTotal(), req.GetTasksDone(), req.GetTasksRunning()
	}
	var acts []rmAction
	for _, id := range req.GetRelease() {
		if ct, ok := a.containers[id]; ok && !ct.am {
			acts = append(acts, rmAction{kind: actStopContainer, nodeAddress: ct.node.address, appID: a.id,
				stop: &messages.NmStopContainer{ContainerId: id, ExitStatus: containerExitKilledByAM, Diagnostics: "Container released by the application master"}})
		}
	}
	a.pending = max(0, int(req.GetNumPending()))
	a.pendingResource = resourceFromProto(req.GetResource())
	resp := &messages.AmAllocateResponse{}
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
	resp.Completed = a.completed
	a.completed = nil
	resp.NumClusterNodes = int32(c.liveNodes())
	return resp, acts, nil
}

// unregisterAM ends a RUNNING application with the AM's final status.
func (c *rmCore) unregisterAM(req *messages.AmUnregister) ([]rmAction, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state.Terminal() {
		return nil, nil
	}
	if a.state != StateRunning {
		return nil, fmt.Errorf("%w: application %s is %s; only a registered application master can unregister", ErrInvalidState, a.id, a.state)
	}
	state := StateFinished
	final := FinalStatus(req.GetFinalStatus())
	if final == FinalKilled {
		state = StateKilled
	}
	return c.finishApp(a, state, final, req.GetDiagnostics(), false), nil
}

// kill ends an application with state KILLED and stops all its containers.
func (c *rmCore) kill(id, diagnostics string) (bool, AppState, []rmAction, error) {
	a, err := c.app(id)
	if err != nil {
		return false, 0, nil, err
	}
	if a.state.Terminal() {
		return false, a.state, nil, nil
	}
	if diagnostics == "" {
		diagnostics = "Application killed by user."
	}
	acts := c.finishApp(a, StateKilled, FinalKilled, diagnostics, true)
	return true, a.state, acts, nil
}

// finishApp moves a to a terminal state, stops its containers (all of them
// with killAM, else all but the AM, which gets amStopGrace to exit) and
// removes its staging folder.
// taskProgress records the task progress a client-mode driver reports;
// it is ignored for other applications and for ended ones.
func (c *rmCore) taskProgress(m *messages.RmTaskProgress) {
	a, err := c.app(m.GetAppId())
	if err != nil || !a.unmanagedDriver || a.state.Terminal() {
		return
	}
	a.tasksTotal, a.tasksDone, a.tasksRunning = m.GetTasksTotal(), m.GetTasksDone(), m.GetTasksRunning()
}

func (c *rmCore) finishApp(a *rmApp, state AppState, final FinalStatus, diag string, killAM bool) []rmAction {
	a.state, a.final, a.diagnostics, a.finish = state, final, diag, c.now()
	a.pending = 0
	a.tasksRunning = 0 // no task runs once the application ended
	var acts []rmAction
	ids := make([]string, 0, len(a.containers))
	for id := range a.containers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ct := a.containers[id]
		if ct.am && !killAM {
			a.amStopAt = c.now().Add(c.amStopGrace)
			continue
		}
		acts = append(acts, c.stopAction(ct, containerExitKilledByRM, "Container killed by the ResourceManager: application "+a.id+" has ended"))
	}
	if a.staged {
		a.staged = false
		acts = append(acts, rmAction{kind: actRemoveStaging, appID: a.id})
	}
	return acts
}

func (c *rmCore) stopAction(ct *rmContainer, status int32, diag string) rmAction {
	return rmAction{kind: actStopContainer, nodeAddress: ct.node.address, appID: ct.app.id,
		stop: &messages.NmStopContainer{ContainerId: ct.id, ExitStatus: status, Diagnostics: diag}}
}

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
		capability: resourceFromProto(req.GetCapability()), containers: make(map[string]*rmContainer), lastSeen: c.now()}
	c.nodes[n.id] = n
	c.nodeOrder = append(c.nodeOrder, n.id)
	return append(acts, c.schedule()...)
}

// heartbeat records a node's liveness and its completed containers.
func (c *rmCore) heartbeat(req *messages.NmHeartbeat) (*messages.NmHeartbeatResponse, []rmAction) {
	n, ok := c.nodes[req.GetNodeId()]
	if !ok || n.lost {
		return &messages.NmHeartbeatResponse{Resync: true}, nil
	}
	n.lastSeen = c.now()
	var acts []rmAction
	for _, st := range req.GetCompleted() {
		acts = append(acts, c.containerCompleted(st)...)
	}
	resp := &messages.NmHeartbeatResponse{}
	for _, id := range req.GetRunning() {
		ct, ok := n.containers[id]
		if !ok || ct.app.state.Terminal() && (!ct.am || !c.now().Before(ct.app.amStopAt)) {
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
		return nil
	}
	if ct.am {
		diag := fmt.Sprintf("Application %s failed 1 times due to AM Container for %s exited with exitCode: %d", a.id, ct.id, st.GetExitStatus())
		if d := st.GetDiagnostics(); d != "" {
			diag += "\n" + d
		}
		return c.finishApp(a, StateFailed, FinalFailed, diag, true)
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
			n.lost = true
		}
	}
	for _, id := range c.appOrder {
		a := c.apps[id]
		if a.state.Terminal() && a.amContainer != nil && !a.amStopAt.IsZero() && !now.Before(a.amStopAt) {
			if ct, ok := a.containers[a.amContainer.id]; ok {
				acts = append(acts, c.stopAction(ct, containerExitAfterAppDone, "Container killed after the application ended"))
			}
			a.amStopAt = time.Time{}
		}
	}
	return append(acts, c.schedule()...)
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
			State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: containerExitAborted, Diagnostics: diag})...)
	}
	return acts
}

func (c *rmCore) report(id string) (*messages.RmApplicationReport, error) {
	a, err := c.app(id)
	if err != nil {
		return nil, err
	}
	r := &messages.RmApplicationReport{AppId: a.id, Name: a.name, Queue: a.queue, User: a.user,
		State: messages.RmAppState(a.state), FinalStatus: messages.RmFinalStatus(a.final), Diagnostics: a.diagnostics,
		AmHost: a.amHost, DriverUrl: a.driverURL, StartTimeMs: a.start.UnixMilli(),
		TasksTotal: a.tasksTotal, TasksDone: a.tasksDone, TasksRunning: a.tasksRunning, AmLogDir: a.amLogDir, Am: a.amRef}
	if !a.finish.IsZero() {
		r.FinishTimeMs = a.finish.UnixMilli()
	}
	for _, ct := range a.containers {
		if !ct.am {
			r.RunningContainers++
		}
	}
	if a.amContainer != nil {
		r.AmContainerId = a.amContainer.id
	}
	return r, nil
}

func (c *rmCore) nodeReports() []*messages.RmNodeReport {
	var out []*messages.RmNodeReport
	for _, id := range c.nodeOrder {
		n := c.nodes[id]
		state := "RUNNING"
		if n.lost {
			state = "LOST"
		}
		out = append(out, &messages.RmNodeReport{NodeId: n.id, Address: n.address, Host: n.host,
			Capability: n.capability.proto(), Used: n.used.proto(), State: state, NumContainers: int32(len(n.containers))})
	}
	return out
}
