package resourcemanager

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestCore(t *testing.T, nodes ...cluster.Resource) (*rmCore, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.UnixMilli(1700000000000)}
	c := newRMCore(clk.t.UnixMilli(), []string{"default", "prod"}, clk.now)
	for i, n := range nodes {
		addr := "127.0.0.1:" + string(rune('1'+i)) + "000"
		c.registerNode(&messages.NmRegister{NodeId: addr, Address: addr, Host: "127.0.0.1", Capability: n.Proto()})
	}
	return c, clk
}

func submitApp(t *testing.T, c *rmCore, am cluster.Resource) (string, []rmAction) {
	t.Helper()
	id, _, _ := c.newApplication()
	acts, err := c.submit(&messages.RmSubmitApplication{AppId: id, Name: "test", AmResource: am.Proto(),
		AmLaunchContext: &messages.RmLaunchContext{Command: []string{"sparkrpc", "am"}}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	c.apps[id].staged = true
	return id, acts
}

func checkNoOversubscription(t *testing.T, c *rmCore) {
	t.Helper()
	for _, n := range c.nodes {
		var sum cluster.Resource
		for _, ct := range n.containers {
			sum = sum.Add(ct.resource)
		}
		if sum != n.used || !n.used.Fits(n.capability) {
			t.Fatalf("node %s: used %+v (sum %+v) of %+v", n.id, n.used, sum, n.capability)
		}
	}
}

func TestAppIDFormat(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 1024, Cores: 1})
	id1, _, _ := c.newApplication()
	id2, _, _ := c.newApplication()
	if id1 != "application_1700000000000_0001" || id2 != "application_1700000000000_0002" {
		t.Fatalf("ids %s %s", id1, id2)
	}
	ts, seq, err := cluster.ParseAppID(id2)
	if err != nil || ts != 1700000000000 || seq != 2 {
		t.Fatalf("ParseAppID = %d %d %v", ts, seq, err)
	}
	if _, _, err := cluster.ParseAppID("app_1"); !errors.Is(err, cluster.ErrUnknownAppID) {
		t.Fatalf("ParseAppID(bad) = %v", err)
	}
}

func TestSubmitLifecycle(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 1024, Cores: 2}, cluster.Resource{MemoryMB: 2048, Cores: 2})
	id, acts := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if st := c.apps[id].state; st != cluster.StateAccepted {
		t.Fatalf("state after submit = %s", st)
	}
	if len(acts) != 1 || acts[0].kind != actStartContainer || acts[0].nodeAddress != "127.0.0.1:2000" {
		t.Fatalf("actions = %+v (want the AM on the node with most free memory)", acts)
	}
	amID := acts[0].start.GetContainer().GetContainerId()
	if !regexp.MustCompile(`^container_1700000000000_0001_01_000001$`).MatchString(amID) {
		t.Fatalf("AM container id %s", amID)
	}
	if _, err := c.registerAM(&messages.AmRegister{AppId: id, DriverUrl: "spark://CoarseGrainedScheduler@h:1"}); err != nil {
		t.Fatal(err)
	}
	if st := c.apps[id].state; st != cluster.StateRunning {
		t.Fatalf("state after register = %s", st)
	}
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); !errors.Is(err, cluster.ErrInvalidState) {
		t.Fatalf("second register = %v", err)
	}
	resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 2, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	if err != nil || len(resp.GetAllocated()) != 2 {
		t.Fatalf("allocate = %v, %v", resp, err)
	}
	for _, ct := range resp.GetAllocated() { // started: a container never started has nothing to stop
		if _, err := c.startExecutor(id, ct.GetContainerId(), &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"}}); err != nil {
			t.Fatal(err)
		}
	}
	checkNoOversubscription(t, c)
	acts, err = c.unregisterAM(&messages.AmUnregister{AppId: id, FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.report(id)
	if cluster.AppState(r.GetState()) != cluster.StateFinished || cluster.FinalStatus(r.GetFinalStatus()) != cluster.FinalSucceeded || r.GetFinishTimeMs() == 0 {
		t.Fatalf("report after unregister = %v", r)
	}
	var stops, staging int
	for _, a := range acts {
		switch a.kind {
		case actStopContainer:
			stops++
			if a.stop.GetContainerId() == amID {
				t.Fatalf("the AM container is stopped at once after unregistering")
			}
		case actRemoveStaging:
			staging++
		}
	}
	if stops != 2 || staging != 1 {
		t.Fatalf("unregister actions: %d stops, %d staging removals", stops, staging)
	}
}

func TestSubmitRefused(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 1024, Cores: 2}, cluster.Resource{MemoryMB: 512, Cores: 4})
	cases := []struct {
		name  string
		queue string
		am    cluster.Resource
		want  error
	}{
		{"memory above every node", "", cluster.Resource{MemoryMB: 2048, Cores: 1}, cluster.ErrResourceTooLarge},
		{"cores above every node", "", cluster.Resource{MemoryMB: 512, Cores: 8}, cluster.ErrResourceTooLarge},
		{"unknown queue", "nope", cluster.Resource{MemoryMB: 512, Cores: 1}, cluster.ErrUnknownQueue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, max, _ := c.newApplication()
			if max != (cluster.Resource{MemoryMB: 1024, Cores: 4}) {
				t.Fatalf("max resource = %+v", max)
			}
			_, err := c.submit(&messages.RmSubmitApplication{AppId: id, Queue: tc.queue, AmResource: tc.am.Proto()})
			if !errors.Is(err, tc.want) {
				t.Fatalf("submit = %v, want %v", err, tc.want)
			}
			if c.apps[id].state != cluster.StateNew {
				t.Fatalf("refused app state = %s", c.apps[id].state)
			}
		})
	}
	var rte *cluster.ResourceTooLargeError
	id, _, _ := c.newApplication()
	_, err := c.submit(&messages.RmSubmitApplication{AppId: id, AmResource: cluster.Resource{MemoryMB: 4096, Cores: 1}.Proto()})
	if !errors.As(err, &rte) || !regexp.MustCompile(`Required AM memory \(4096 MB\) is above the max threshold \(1024 MB\)`).MatchString(err.Error()) {
		t.Fatalf("error text: %v", err)
	}
	if _, err := c.submit(&messages.RmSubmitApplication{AppId: "application_1_0099"}); !errors.Is(err, cluster.ErrUnknownAppID) {
		t.Fatalf("unknown app: %v", err)
	}
}

func TestAllocationNeverOversubscribes(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 1024, Cores: 2}, cluster.Resource{MemoryMB: 1024, Cores: 2}, cluster.Resource{MemoryMB: 700, Cores: 8})
	id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := 0; i < 5; i++ {
		resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 20, Resource: cluster.Resource{MemoryMB: 300, Cores: 1}.Proto()})
		if err != nil {
			t.Fatal(err)
		}
		total += len(resp.GetAllocated())
		checkNoOversubscription(t, c)
	}
	// node 1 (AM there or not) and the others: by memory 1024/300=3 but 2 cores; 700/300=2.
	if total != 5 {
		t.Fatalf("allocated %d containers, want 5", total)
	}
	// A completed container frees room for one more, and is reported.
	var one string
	for cid, ct := range c.apps[id].containers {
		if !ct.am && ct.node.id == "127.0.0.1:3000" {
			one = cid
		}
	}
	c.heartbeat(&messages.NmHeartbeat{NodeId: "127.0.0.1:3000", Completed: []*messages.RmContainerStatus{{ContainerId: one, ExitStatus: 137, Diagnostics: "killed"}}})
	resp, _, _ := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 20, Resource: cluster.Resource{MemoryMB: 300, Cores: 1}.Proto()})
	if len(resp.GetAllocated()) != 1 || len(resp.GetCompleted()) != 1 || resp.GetCompleted()[0].GetExitStatus() != 137 {
		t.Fatalf("after completion: %v", resp)
	}
	checkNoOversubscription(t, c)
}

func TestAMContainerExitFailsApp(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	id, acts := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	amID := acts[0].start.GetContainer().GetContainerId()
	_, acts = c.heartbeat(&messages.NmHeartbeat{NodeId: "127.0.0.1:1000", Completed: []*messages.RmContainerStatus{{ContainerId: amID, ExitStatus: 13, Diagnostics: "Timed out waiting for SparkContext."}}})
	r, _ := c.report(id)
	if cluster.AppState(r.GetState()) != cluster.StateFailed || cluster.FinalStatus(r.GetFinalStatus()) != cluster.FinalFailed {
		t.Fatalf("report = %v", r)
	}
	if !regexp.MustCompile(`exited with exitCode: 13\nTimed out waiting for SparkContext.`).MatchString(r.GetDiagnostics()) {
		t.Fatalf("diagnostics = %q", r.GetDiagnostics())
	}
	if len(acts) != 1 || acts[0].kind != actRemoveStaging {
		t.Fatalf("actions = %+v", acts)
	}
	if c.nodes["127.0.0.1:1000"].used != (cluster.Resource{}) {
		t.Fatalf("resources not freed: %+v", c.nodes["127.0.0.1:1000"].used)
	}
}

func TestKill(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4})
	id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	c.registerAM(&messages.AmRegister{AppId: id})
	resp, _, _ := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 2, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	for _, ct := range resp.GetAllocated() { // started: a container never started has nothing to stop
		if _, err := c.startExecutor(id, ct.GetContainerId(), &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"}}); err != nil {
			t.Fatal(err)
		}
	}
	killed, state, acts, err := c.kill(id, "")
	if err != nil || !killed || state != cluster.StateKilled {
		t.Fatalf("kill = %v %s %v", killed, state, err)
	}
	stops := 0
	for _, a := range acts {
		if a.kind == actStopContainer {
			stops++
		}
	}
	if stops != 3 {
		t.Fatalf("kill stopped %d containers, want 3 (AM and 2 executors)", stops)
	}
	r, _ := c.report(id)
	if cluster.FinalStatus(r.GetFinalStatus()) != cluster.FinalKilled || r.GetDiagnostics() != "Application killed by user." {
		t.Fatalf("report = %v", r)
	}
	if killed, _, _, _ := c.kill(id, ""); killed {
		t.Fatal("killed twice")
	}
	// The AM's late heartbeat tells it to shut down.
	resp, _, err = c.allocateFor(&messages.AmAllocate{AppId: id})
	if err != nil || !resp.GetShutdown() {
		t.Fatalf("allocate after kill = %v, %v", resp, err)
	}
}

// twoNodesRunning returns a core of two nodes running an application with
// two executors: its id, the node of its AM and the other node.
func twoNodesRunning(t *testing.T) (c *rmCore, clk *fakeClock, id, amNode, other string) {
	t.Helper()
	c, clk = newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4}, cluster.Resource{MemoryMB: 2048, Cores: 4})
	id, acts := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	amNode = acts[0].nodeAddress
	c.registerAM(&messages.AmRegister{AppId: id})
	resp, _, _ := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 2, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	if len(resp.GetAllocated()) != 2 {
		t.Fatalf("allocated %d", len(resp.GetAllocated()))
	}
	other = "127.0.0.1:1000"
	if amNode == other {
		other = "127.0.0.1:2000"
	}
	return c, clk, id, amNode, other
}

func TestLostNode(t *testing.T) {
	c, clk, id, amNode, other := twoNodesRunning(t)
	clk.t = clk.t.Add(30 * time.Second)
	c.heartbeat(&messages.NmHeartbeat{NodeId: amNode})
	clk.t = clk.t.Add(40 * time.Second)
	c.checkNodes(time.Minute)
	if !c.nodes[other].lost || c.nodes[amNode].lost {
		t.Fatalf("lost: %s=%v %s=%v", other, c.nodes[other].lost, amNode, c.nodes[amNode].lost)
	}
	resp, _, _ := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	if len(resp.GetCompleted()) != 1 || resp.GetCompleted()[0].GetExitStatus() != cluster.ContainerExitAborted ||
		!regexp.MustCompile(`lost\* node`).MatchString(resp.GetCompleted()[0].GetDiagnostics()) {
		t.Fatalf("completed = %v", resp.GetCompleted())
	}
	if len(resp.GetAllocated()) != 1 || resp.GetAllocated()[0].GetNodeAddress() != amNode {
		t.Fatalf("replacement = %v", resp.GetAllocated())
	}
	// A heartbeat from the lost node asks it to register again.
	if hb, _ := c.heartbeat(&messages.NmHeartbeat{NodeId: other}); !hb.GetResync() {
		t.Fatal("no resync for a lost node")
	}
	checkNoOversubscription(t, c)
}

// A node reserved for application masters takes the AM containers and no
// executor; the workers take the executors.
func TestAMNodeIsReservedForApplicationMasters(t *testing.T) {
	c, _ := newTestCore(t)
	am := &messages.NmRegister{NodeId: "127.0.0.1:9000", Address: "127.0.0.1:9000", Host: "127.0.0.1", Capability: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()}
	c.amNodes[am.NodeId] = true
	c.registerNode(am)
	for _, addr := range []string{"127.0.0.1:1000", "127.0.0.1:2000"} {
		c.registerNode(&messages.NmRegister{NodeId: addr, Address: addr, Host: "127.0.0.1", Capability: cluster.Resource{MemoryMB: 1024, Cores: 1}.Proto()})
	}
	id, acts := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if len(acts) != 1 || acts[0].nodeAddress != am.Address {
		t.Fatalf("AM started on %+v, want the AM node", acts)
	}
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	// Small executors that would fit on the AM node too.
	resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 5, Resource: cluster.Resource{MemoryMB: 256, Cores: 1}.Proto()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetAllocated()) != 2 {
		t.Fatalf("allocated %d executors, want 2 (one per worker)", len(resp.GetAllocated()))
	}
	for _, ct := range resp.GetAllocated() {
		if ct.GetNodeId() == am.NodeId {
			t.Fatalf("an executor went to the AM node: %v", ct)
		}
	}
	checkNoOversubscription(t, c)
	// With the AM node full, a second application's AM goes to a worker
	// with room rather than wait.
	c.heartbeat(&messages.NmHeartbeat{NodeId: "127.0.0.1:1000", Completed: []*messages.RmContainerStatus{
		{ContainerId: resp.GetAllocated()[0].GetContainerId(), ExitStatus: 0}}})
	c.heartbeat(&messages.NmHeartbeat{NodeId: "127.0.0.1:2000", Completed: []*messages.RmContainerStatus{
		{ContainerId: resp.GetAllocated()[1].GetContainerId(), ExitStatus: 0}}})
	_, acts = submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if len(acts) != 1 || acts[0].nodeAddress == am.Address {
		t.Fatalf("second AM started on %+v, want a worker", acts)
	}
}

// Every container of an application gets the resources its submission
// named, whatever the application master's launch context says; a node
// that keeps an application's resources learns when it has ended.
func TestResourcesGoToEveryContainerAndAwayWithTheApplication(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 4096, Cores: 4})
	res := []*messages.RmLocalResource{{Name: cluster.AppResourceName, Kind: messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM, Size: 1, Sha256: make([]byte, 32)}}
	id, _, _ := c.newApplication()
	acts, err := c.submit(&messages.RmSubmitApplication{AppId: id, AmResource: (cluster.Resource{MemoryMB: 512, Cores: 1}).Proto(),
		AmLaunchContext: &messages.RmLaunchContext{Command: []string{"sparkrpc", "am"}, Resources: res}})
	if err != nil || len(acts) != 1 || len(acts[0].start.GetLaunchContext().GetResources()) != 1 {
		t.Fatalf("submit: %v, %v", acts, err)
	}
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: (cluster.Resource{MemoryMB: 512, Cores: 1}).Proto()})
	if err != nil || len(resp.GetAllocated()) != 1 {
		t.Fatalf("allocate: %v, %v", resp, err)
	}
	start, err := c.startExecutor(id, resp.GetAllocated()[0].GetContainerId(), &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"},
		Resources: []*messages.RmLocalResource{{Name: "other", Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := start.start.GetLaunchContext().GetResources(); len(got) != 1 || got[0].GetName() != cluster.AppResourceName {
		t.Fatalf("the executor's resources: %v", got)
	}
	node := "127.0.0.1:1000"
	hb := func() []string {
		r, _ := c.heartbeat(&messages.NmHeartbeat{NodeId: node, CachedApps: []string{id, "application_1_0042"}})
		return r.GetFinishedApps()
	}
	if got := hb(); len(got) != 1 || got[0] != "application_1_0042" {
		t.Fatalf("finished applications while %s runs: %v", id, got)
	}
	c.kill(id, "")
	if got := hb(); len(got) != 2 {
		t.Fatalf("finished applications after %s was killed: %v", id, got)
	}
}

// TestTrackingURLBecomesTheHistoryPageOnceTheApplicationEnds checks that an
// application's tracking URL is the driver's UI while it runs and its
// history page once it has ended, whether its AM unregistered or it was
// killed.
func TestTrackingURLBecomesTheHistoryPageOnceTheApplicationEnds(t *testing.T) {
	const live, history = "http://driver:4040", "http://hs:18080/history/app/"
	for _, end := range []string{"unregister", "kill"} {
		t.Run(end, func(t *testing.T) {
			c, _ := newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4})
			id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
			if _, err := c.registerAM(&messages.AmRegister{AppId: id, TrackingUrl: live, HistoryUrl: history}); err != nil {
				t.Fatal(err)
			}
			if r, _ := c.report(id); r.GetTrackingUrl() != live {
				t.Fatalf("running: tracking URL %q, want %q", r.GetTrackingUrl(), live)
			}
			var err error
			if end == "kill" {
				_, _, _, err = c.kill(id, "")
			} else {
				_, err = c.unregisterAM(&messages.AmUnregister{AppId: id, FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_FAILED})
			}
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := c.report(id); r.GetTrackingUrl() != history {
				t.Fatalf("ended: tracking URL %q, want %q", r.GetTrackingUrl(), history)
			}
		})
	}
}

// A node that unregisters (shutting down) is SHUTDOWN at once, not LOST
// at its expiry: its containers are reported failed and replaced elsewhere,
// it gets nothing more, and it comes back by registering again.
func TestUnregisteredNode(t *testing.T) {
	c, _, id, amNode, other := twoNodesRunning(t)
	if _, ok := c.unregisterNode(other); !ok {
		t.Fatal("unregistering a running node changed nothing")
	}
	if _, ok := c.unregisterNode(other); ok {
		t.Fatal("unregistering it again changed something")
	}
	if _, ok := c.unregisterNode("127.0.0.1:9999"); ok {
		t.Fatal("unregistering an unknown node changed something")
	}
	states := map[string]string{}
	for _, n := range c.nodeReports() {
		states[n.GetNodeId()] = n.GetState()
		if n.GetNodeId() == other && n.GetNumContainers() != 0 {
			t.Fatalf("the shut-down node still has %d containers", n.GetNumContainers())
		}
	}
	if states[other] != "SHUTDOWN" || states[amNode] != "RUNNING" {
		t.Fatalf("states = %v, want %s SHUTDOWN and %s RUNNING", states, other, amNode)
	}
	resp, _, _ := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	if len(resp.GetCompleted()) != 1 || resp.GetCompleted()[0].GetExitStatus() != cluster.ContainerExitAborted ||
		!regexp.MustCompile(`node that shut down`).MatchString(resp.GetCompleted()[0].GetDiagnostics()) {
		t.Fatalf("completed = %v", resp.GetCompleted())
	}
	if len(resp.GetAllocated()) != 1 || resp.GetAllocated()[0].GetNodeAddress() != amNode {
		t.Fatalf("replacement = %v, want it on %s", resp.GetAllocated(), amNode)
	}
	if hb, _ := c.heartbeat(&messages.NmHeartbeat{NodeId: other}); !hb.GetResync() {
		t.Fatal("no resync for a node that shut down")
	}
	c.registerNode(&messages.NmRegister{NodeId: other, Address: other, Host: "127.0.0.1", Capability: cluster.Resource{MemoryMB: 2048, Cores: 4}.Proto()})
	for _, n := range c.nodeReports() {
		if n.GetNodeId() == other && n.GetState() != "RUNNING" {
			t.Fatalf("the node registered again is %s", n.GetState())
		}
	}
	checkNoOversubscription(t, c)
}

// Without a history server, an ended application has no tracking URL: the
// driver's UI it pointed to ended with it.
func TestEndedApplicationWithoutHistoryHasNoTrackingURL(t *testing.T) {
	const live = "http://driver:4040"
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4})
	id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if _, err := c.registerAM(&messages.AmRegister{AppId: id, TrackingUrl: live}); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.report(id); r.GetTrackingUrl() != live {
		t.Fatalf("running: tracking URL %q, want %q", r.GetTrackingUrl(), live)
	}
	if _, err := c.unregisterAM(&messages.AmUnregister{AppId: id, FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED}); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.report(id); r.GetTrackingUrl() != "" {
		t.Fatalf("ended: tracking URL %q, want none", r.GetTrackingUrl())
	}
}

// A node's heartbeat completes the containers of that node only: another
// node's report of them is ignored. Before, a heartbeat from any node
// completed any container of the cluster, and one that named an
// application master's failed its application.
func TestHeartbeatCompletesOnlyItsNodesContainers(t *testing.T) {
	c, _, id, amNode, other := twoNodesRunning(t)
	am := c.apps[id].amContainer.id
	c.heartbeat(&messages.NmHeartbeat{NodeId: other, Completed: []*messages.RmContainerStatus{{ContainerId: am, ExitStatus: 1}}})
	if r, _ := c.report(id); cluster.AppState(r.GetState()).Terminal() {
		t.Fatalf("node %s reported node %s's AM container completed, and the application ended: %v", other, amNode, r)
	}
	if _, ok := c.nodes[amNode].containers[am]; !ok {
		t.Fatalf("the AM container left node %s on node %s's report", amNode, other)
	}
	checkNoOversubscription(t, c)
	c.heartbeat(&messages.NmHeartbeat{NodeId: amNode, Completed: []*messages.RmContainerStatus{{ContainerId: am, ExitStatus: 1}}})
	if r, _ := c.report(id); cluster.AppState(r.GetState()) != cluster.StateFailed {
		t.Fatalf("its own node reported the AM container completed: %v, want FAILED", r)
	}
}
