package resourcemanager

// This file holds the resource manager core's application lifecycle:
// NEW → SUBMITTED → ACCEPTED → RUNNING → FINISHED | FAILED | KILLED, the
// application master's registration, and application reports.

import (
	"fmt"
	"sort"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// MaxNewApps bounds the applications a resource manager holds created and
// not yet submitted (NEW): a client with the cluster's key that creates
// applications and never submits them would otherwise grow its memory
// without end. Past it a new application is refused with
// cluster.ErrTooManyNewApps until some are submitted or killed.
const MaxNewApps = 1000

// newApplication creates an application in state NEW, unless MaxNewApps
// are NEW already.
func (c *rmCore) newApplication() (string, cluster.Resource, error) {
	fresh := 0
	for _, id := range c.appOrder {
		if c.apps[id].state == cluster.StateNew {
			fresh++
		}
	}
	if fresh >= MaxNewApps {
		return "", cluster.Resource{}, fmt.Errorf("%w: %d applications are NEW (at most %d); submit or kill some",
			cluster.ErrTooManyNewApps, fresh, MaxNewApps)
	}
	c.nextApp++
	id := cluster.AppID(c.clusterTimestamp, c.nextApp)
	a := &rmApp{id: id, seq: c.nextApp, state: cluster.StateNew, final: cluster.FinalUndefined, start: c.now(),
		containers: make(map[string]*rmContainer)}
	c.apps[id] = a
	c.appOrder = append(c.appOrder, id)
	return id, c.maxResource(), nil
}

// submit moves a NEW application to SUBMITTED and then ACCEPTED, and
// schedules its AM container when a node has room.
func (c *rmCore) submit(req *messages.RmSubmitApplication) ([]rmAction, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state != cluster.StateNew {
		return nil, fmt.Errorf("%w: application %s is already %s", cluster.ErrInvalidState, a.id, a.state)
	}
	queue := req.GetQueue()
	if queue == "" {
		queue = "default"
	}
	if !c.queues[queue] {
		return nil, fmt.Errorf("%w: Application %s submitted by user %s to unknown queue: %s", cluster.ErrUnknownQueue, a.id, req.GetUser(), queue)
	}
	res := cluster.ResourceFromProto(req.GetAmResource())
	if res.MemoryMB <= 0 || res.Cores <= 0 {
		return nil, fmt.Errorf("%w: the AM must ask for positive memory and cores, not %d MB and %d cores", cluster.ErrResourceTooLarge, res.MemoryMB, res.Cores)
	}
	if maxRes := c.maxResource(); !res.Fits(maxRes) {
		return nil, &cluster.ResourceTooLargeError{What: "AM", Requested: res, Max: maxRes}
	}
	a.name, a.queue, a.user = req.GetName(), queue, req.GetUser()
	a.amResource = res
	a.amLaunch = req.GetAmLaunchContext()
	a.resources = a.amLaunch.GetResources()
	a.unmanagedDriver = req.GetUnmanagedDriver()
	a.secret = req.GetAppSecret()
	a.acls = req.GetAcls()
	if a.acls == nil {
		a.acls = &messages.RmAppAcls{}
	}
	a.acls.Owner = a.user
	if a.amLaunch != nil {
		a.amLaunch.Acls = a.acls
	}
	// SUBMITTED, then at once ACCEPTED: the scheduler has no admission
	// control beyond the checks above.
	a.state = cluster.StateSubmitted
	a.state = cluster.StateAccepted
	return c.schedule(), nil
}

// registerAM moves an ACCEPTED application whose AM container runs to RUNNING.
func (c *rmCore) registerAM(req *messages.AmRegister) (*messages.AmRegisterResponse, error) {
	a, err := c.app(req.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state != cluster.StateAccepted || a.amContainer == nil {
		return nil, fmt.Errorf("%w: application %s is %s; an application master can register only while it is ACCEPTED", cluster.ErrInvalidState, a.id, a.state)
	}
	a.state, a.amSeen = cluster.StateRunning, c.now()
	a.amHost, a.driverURL, a.amRef = req.GetHost(), req.GetDriverUrl(), req.GetAm()
	a.trackingURL, a.historyURL = req.GetTrackingUrl(), req.GetHistoryUrl()
	return &messages.AmRegisterResponse{MaxResource: c.maxExecutorResource(false).Proto(), Queue: a.queue}, nil
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
	if a.state != cluster.StateRunning {
		return nil, fmt.Errorf("%w: application %s is %s; only a registered application master can unregister", cluster.ErrInvalidState, a.id, a.state)
	}
	state := cluster.StateFinished
	final := cluster.FinalStatus(req.GetFinalStatus())
	if final == cluster.FinalKilled {
		state = cluster.StateKilled
	}
	return c.finishApp(a, state, final, req.GetDiagnostics(), false), nil
}

// kill ends an application with state KILLED and stops all its containers.
func (c *rmCore) kill(id, diagnostics string) (bool, cluster.AppState, []rmAction, error) {
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
	acts := c.finishApp(a, cluster.StateKilled, cluster.FinalKilled, diagnostics, true)
	return true, a.state, acts, nil
}

// taskProgress records the task progress a client-mode driver reports;
// it is ignored for other applications and for ended ones.
func (c *rmCore) taskProgress(m *messages.RmTaskProgress) {
	a, err := c.app(m.GetAppId())
	if err != nil || !a.unmanagedDriver || a.state.Terminal() {
		return
	}
	a.tasksTotal, a.tasksDone, a.tasksRunning = m.GetTasksTotal(), m.GetTasksDone(), m.GetTasksRunning()
}

// finishApp moves a to a terminal state, stops its containers (all of them
// with killAM, else all but the AM, which gets amStopGrace to exit) and
// removes its staging folder.
func (c *rmCore) finishApp(a *rmApp, state cluster.AppState, final cluster.FinalStatus, diag string, killAM bool) []rmAction {
	a.state, a.final, a.diagnostics, a.finish = state, final, diag, c.now()
	a.pending = 0
	a.tasksRunning = 0                  // no task runs once the application ended
	a.completed, a.lastReply = nil, nil // no AM hears of them any more
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
		if !ct.launched { // its node manager never heard of it: nothing to stop
			c.free(ct)
			continue
		}
		acts = append(acts, c.stopAction(ct, cluster.ContainerExitKilledByRM, "Container killed by the ResourceManager: application "+a.id+" has ended"))
	}
	if a.staged {
		a.staged = false
		acts = append(acts, rmAction{kind: actRemoveStaging, appID: a.id})
	}
	if a.secret != nil {
		a.secret = nil
		acts = append(acts, rmAction{kind: actForgetSecret, appID: a.id})
	}
	// Its AM's launch context holds the secret too, and nothing starts
	// from it any more.
	a.amLaunch = nil
	c.ended = append(c.ended, a.id)
	c.pruneEnded()
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
		TasksTotal: a.tasksTotal, TasksDone: a.tasksDone, TasksRunning: a.tasksRunning, AmLogDir: a.amLogDir, Am: a.amRef,
		TrackingUrl: a.trackingURL}
	if a.state.Terminal() {
		// The driver's UI ended with the application: its page on the
		// history server, when it has one, else none (no dead link).
		r.TrackingUrl = a.historyURL
	}
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

// applications returns the reports of the applications in one of states
// (all when states is empty), in submission order.
func (c *rmCore) applications(states []messages.RmAppState) *messages.RmApplications {
	want := make(map[cluster.AppState]bool, len(states))
	for _, s := range states {
		want[cluster.AppState(s)] = true
	}
	out := &messages.RmApplications{}
	for _, id := range c.appOrder {
		a, ok := c.apps[id]
		if !ok || len(want) > 0 && !want[a.state] {
			continue
		}
		if r, err := c.report(id); err == nil {
			out.Apps = append(out.Apps, r)
		}
	}
	return out
}
