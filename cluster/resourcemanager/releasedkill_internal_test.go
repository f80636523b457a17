package resourcemanager

import (
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A container its application master released is stopped by an ask to its
// node manager, which may be lost (a connection that drops, a node manager
// that answers after the ask timed out: the endpoint only logs it at debug
// level). The node's heartbeats, which report the container still running,
// must then tell the node to kill it, as they do for a container of an
// ended application or one the resource manager does not know (YARN's
// containers to clean up in the heartbeat's answer); before, it ran and
// held its node's room until its application ended.
func TestReleasedContainerStillRunningIsKilledByTheHeartbeat(t *testing.T) {
	c, clk := newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4})
	const node = "127.0.0.1:1000"
	id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 2, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()})
	if err != nil || len(resp.GetAllocated()) != 2 {
		t.Fatalf("allocate: %v, %v", resp, err)
	}
	released, kept := resp.GetAllocated()[0].GetContainerId(), resp.GetAllocated()[1].GetContainerId()
	for _, cid := range []string{released, kept} {
		if _, err := c.startExecutor(id, cid, &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"}}); err != nil {
			t.Fatal(err)
		}
	}
	_, acts, err := c.allocateFor(&messages.AmAllocate{AppId: id, Release: []string{released}})
	if err != nil || len(acts) != 1 || acts[0].kind != actStopContainer {
		t.Fatalf("release: %+v, %v", acts, err)
	}
	am := c.apps[id].amContainer.id
	// A heartbeat right after the release does not kill it: the stop, with
	// the AM's exit status, is on its way (a kill that overtook it would
	// report the container killed by the resource manager).
	hb, _ := c.heartbeat(&messages.NmHeartbeat{NodeId: node, Running: []string{am, released, kept}})
	if len(hb.GetKill()) != 0 {
		t.Errorf("a heartbeat right after the release kills %v, overtaking the release's stop", hb.GetKill())
	}
	// That stop never reaches the node manager.
	clk.t = clk.t.Add(releasedKillAfter)
	hb, _ = c.heartbeat(&messages.NmHeartbeat{NodeId: node, Running: []string{am, released, kept}})
	if !slices.Contains(hb.GetKill(), released) {
		t.Errorf("the node still runs container %s, which its application master released; its heartbeat's answer kills %v", released, hb.GetKill())
	}
	if slices.Contains(hb.GetKill(), kept) || slices.Contains(hb.GetKill(), am) {
		t.Errorf("the heartbeat's answer kills %v: containers in use", hb.GetKill())
	}
	// Once it is reported complete, its room is free and the AM hears of it.
	c.heartbeat(&messages.NmHeartbeat{NodeId: node, Completed: []*messages.RmContainerStatus{{ContainerId: released, ExitStatus: cluster.ContainerExitKilledByAM}},
		Running: []string{am, kept}})
	if got := c.nodes[node].used; got != (cluster.Resource{MemoryMB: 1024, Cores: 2}) {
		t.Errorf("node uses %+v, want the AM's and one executor's", got)
	}
	checkNoOversubscription(t, c)
}
