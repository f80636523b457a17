package resourcemanager

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// runOneApplication takes a new application through its whole life on
// node: submitted, its AM started and registered, one executor allocated
// and started, the AM unregistered, and both containers reported complete
// by the node's heartbeat.
func runOneApplication(t *testing.T, c *rmCore, node string) string {
	t.Helper()
	id, acts := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if len(acts) != 1 || acts[0].kind != actStartContainer {
		t.Fatalf("%s: submit actions %+v", id, acts)
	}
	amID := acts[0].start.GetContainer().GetContainerId()
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	if err != nil || len(resp.GetAllocated()) != 1 {
		t.Fatalf("%s: allocate = %v, %v", id, resp, err)
	}
	exID := resp.GetAllocated()[0].GetContainerId()
	if _, err := c.startExecutor(id, exID, &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.unregisterAM(&messages.AmUnregister{AppId: id, FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED}); err != nil {
		t.Fatal(err)
	}
	c.heartbeat(&messages.NmHeartbeat{NodeId: node, Completed: []*messages.RmContainerStatus{
		{ContainerId: exID, ExitStatus: cluster.ContainerExitKilledByRM},
		{ContainerId: amID, ExitStatus: 0},
	}})
	return id
}

// A resource manager runs for months while applications come and go: it
// must not keep every ended application for ever (YARN keeps
// yarn.resourcemanager.max-completed-applications, 1000, and forgets the
// oldest). Before, rmCore.apps and appOrder grew by one entry per
// application ever created, each holding its launch context, and every
// node heartbeat, AM heartbeat and tick walked all of them (schedule).
func TestEndedApplicationsAreNotKeptForEver(t *testing.T) {
	const retained = 1000 // yarn.resourcemanager.max-completed-applications' default
	const node = "127.0.0.1:1000"
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 4096, Cores: 8})
	// One application that stays running through it all.
	longID, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if _, err := c.registerAM(&messages.AmRegister{AppId: longID}); err != nil {
		t.Fatal(err)
	}
	const cycles = retained + 200
	var first, last string
	for i := range cycles {
		id := runOneApplication(t, c, node)
		if i == 0 {
			first = id
		}
		last = id
	}
	if n := len(c.apps); n > retained+1 {
		t.Fatalf("after %d applications ended, the resource manager keeps %d (appOrder %d); want at most %d ended ones and the running one",
			cycles, n, len(c.appOrder), retained)
	}
	if len(c.appOrder) != len(c.apps) {
		t.Fatalf("appOrder holds %d ids for %d applications", len(c.appOrder), len(c.apps))
	}
	if r, err := c.report(longID); err != nil || cluster.AppState(r.GetState()) != cluster.StateRunning {
		t.Fatalf("the running application: %v, %v", r, err)
	}
	if r, err := c.report(last); err != nil || cluster.AppState(r.GetState()) != cluster.StateFinished {
		t.Fatalf("the last ended application: %v, %v", r, err)
	}
	if _, err := c.report(first); !errors.Is(err, cluster.ErrUnknownAppID) {
		t.Fatalf("the oldest ended application: %v, want ErrUnknownAppID", err)
	}
	if got := len(c.nodes[node].containers); got != 1 { // the running application's AM
		t.Fatalf("node holds %d containers, want 1", got)
	}
}

// An ended application whose AM container is still in its grace period
// (or whose node has not reported its containers yet) is not forgotten
// while a node still holds one of its containers.
func TestEndedApplicationWithContainersIsKept(t *testing.T) {
	const node = "127.0.0.1:1000"
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 4096, Cores: 8})
	id, acts := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	amID := acts[0].start.GetContainer().GetContainerId()
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.unregisterAM(&messages.AmUnregister{AppId: id, FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED}); err != nil {
		t.Fatal(err)
	}
	const retained = 1000
	for range retained + 5 {
		runOneApplication(t, c, node)
	}
	if _, err := c.report(id); err != nil {
		t.Fatalf("an ended application whose AM container still runs was forgotten: %v", err)
	}
	c.heartbeat(&messages.NmHeartbeat{NodeId: node, Completed: []*messages.RmContainerStatus{{ContainerId: amID}}})
	runOneApplication(t, c, node)
	if _, err := c.report(id); !errors.Is(err, cluster.ErrUnknownAppID) {
		t.Fatalf("once its last container completed: %v, want ErrUnknownAppID", err)
	}
	if len(c.apps) != retained {
		t.Fatalf("%d applications kept, want %d", len(c.apps), retained)
	}
}

// An application's secret is in the resource manager's memory only until
// the application ends (rmApp.secret, README "How secrets reach
// processes"): finishApp forgot rmApp.secret but the AM's launch context,
// kept with the application, still held the same bytes.
func TestEndedApplicationKeepsNoSecret(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 4096, Cores: 8})
	secret := []byte("0123456789abcdef0123456789abcdef")
	id, _, _ := c.newApplication()
	if _, err := c.submit(&messages.RmSubmitApplication{AppId: id, Name: "test", AmResource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto(),
		AppSecret: secret, AmLaunchContext: &messages.RmLaunchContext{Command: []string{"sparkrpc", "am"}, Secret: secret}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.kill(id, ""); err != nil {
		t.Fatal(err)
	}
	a := c.apps[id]
	if a.secret != nil || a.amLaunch.GetSecret() != nil {
		t.Fatalf("the killed application still holds its secret: rmApp.secret %q, amLaunch.Secret %q", a.secret, a.amLaunch.GetSecret())
	}
}

// A node manager listens on a random port unless told otherwise
// (`sparkrpc nodemanager --port 0`), so each restart registers a new node
// id; the old one is SHUTDOWN (it unregistered) or LOST (it was killed).
// The resource manager must not list, scan and export metrics of every
// node that ever was: before, 300 restarts left 300 dead nodes in
// rmCore.nodes and nodeOrder for ever, each walked by every scheduling
// pass and exported as five sparkrpc_rm_node_* series.
func TestDeadNodesAreNotKeptForEver(t *testing.T) {
	const expiry = time.Minute
	c, clk := newTestCore(t)
	reg := func(port int) string {
		id := fmt.Sprintf("127.0.0.1:%d", port)
		c.registerNode(&messages.NmRegister{NodeId: id, Address: id, Host: "127.0.0.1", Capability: cluster.Resource{MemoryMB: 2048, Cores: 2}.Proto()})
		return id
	}
	const restarts = 300
	live := reg(40000)
	for i := range restarts {
		if i%2 == 0 {
			c.unregisterNode(live) // stopped by SIGTERM: SHUTDOWN
		} else {
			clk.t = clk.t.Add(2 * expiry) // killed: LOST at its expiry
			c.checkNodes(expiry)
		}
		live = reg(40001 + i)
		c.heartbeat(&messages.NmHeartbeat{NodeId: live})
	}
	for range 60 { // an hour of ticks, the live node heartbeating
		clk.t = clk.t.Add(expiry)
		c.heartbeat(&messages.NmHeartbeat{NodeId: live})
		c.checkNodes(expiry)
	}
	if len(c.nodes) != 1 || len(c.nodeOrder) != 1 || len(c.nodeReports()) != 1 {
		t.Fatalf("after %d node manager restarts and an hour, the resource manager keeps %d nodes (order %d, reports %d); want the live one",
			restarts, len(c.nodes), len(c.nodeOrder), len(c.nodeReports()))
	}
	if n := c.nodes[live]; n == nil || n.lost {
		t.Fatalf("the live node %s: %+v", live, n)
	}
}

// A client with the cluster's key that creates applications and never
// submits them cannot grow the resource manager without end: past
// MaxNewApps NEW applications a new one is refused with ErrTooManyNewApps,
// and once one is killed (and so ended) there is room again. Before, every
// RmNewApplication added an application that stayed until it was killed.
func TestApplicationsCreatedAndNeverSubmittedAreBounded(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 4096, Cores: 8})
	var first string
	for i := range MaxNewApps {
		id, _, err := c.newApplication()
		if err != nil {
			t.Fatalf("new application %d: %v", i, err)
		}
		if i == 0 {
			first = id
		}
	}
	if _, _, err := c.newApplication(); !errors.Is(err, cluster.ErrTooManyNewApps) {
		t.Fatalf("new application past %d NEW ones: %v, want ErrTooManyNewApps", MaxNewApps, err)
	}
	if len(c.apps) != MaxNewApps {
		t.Fatalf("%d applications held, want %d", len(c.apps), MaxNewApps)
	}
	if _, _, _, err := c.kill(first, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.newApplication(); err != nil {
		t.Fatalf("new application once one NEW was killed: %v", err)
	}
}
