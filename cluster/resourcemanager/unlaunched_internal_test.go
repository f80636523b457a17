package resourcemanager

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A container that was allocated and never started, whether its
// application master gives it back or its application ends, is freed at
// once: no node manager knows it, so no heartbeat would report it
// complete. (The deterministic simulation found one allocated to an
// application master's last heartbeat, as the application ended, held by
// the resource manager for good.)
func TestAContainerNeverStartedIsFreed(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(c *rmCore, app, container string) []rmAction
	}{
		{"released by the application master", func(c *rmCore, app, container string) []rmAction {
			_, acts, err := c.allocateFor(&messages.AmAllocate{AppId: app, Release: []string{container}})
			if err != nil {
				t.Fatal(err)
			}
			return acts
		}},
		{"its application ends", func(c *rmCore, app, _ string) []rmAction {
			acts, err := c.unregisterAM(&messages.AmUnregister{AppId: app, FinalStatus: messages.RmFinalStatus(cluster.FinalSucceeded)})
			if err != nil {
				t.Fatal(err)
			}
			return acts
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4})
			id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
			if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
				t.Fatal(err)
			}
			resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: cluster.Resource{MemoryMB: 1024, Cores: 1}.Proto()})
			if err != nil || len(resp.GetAllocated()) != 1 {
				t.Fatalf("allocation: %v, %v", resp, err)
			}
			unused := resp.GetAllocated()[0].GetContainerId()
			for _, a := range tc.end(c, id, unused) {
				if a.kind == actStopContainer && a.stop.GetContainerId() == unused {
					t.Errorf("asked a node manager to stop container %s, which it never started", unused)
				}
			}
			n := c.nodes["127.0.0.1:1000"]
			if _, held := n.containers[unused]; held || n.used != (cluster.Resource{MemoryMB: 512, Cores: 1}) {
				t.Errorf("the node holds %v (used %+v), want the AM's container alone", n.containers, n.used)
			}
			checkNoOversubscription(t, c)
		})
	}
}
