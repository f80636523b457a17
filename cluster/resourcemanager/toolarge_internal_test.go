package resourcemanager

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// An application master that asks for executor containers larger than any
// node an executor may run on is told so (ErrResourceTooLarge, as YARN's
// InvalidResourceRequestException), as a submission whose AM is too large
// is, rather than waiting for ever with its application ACCEPTED-looking
// and "Initial job has not accepted any resources". The largest such node
// is what the AM's registration answers as the maximum: a node reserved for
// application masters takes no executor, so it does not count.
// Before, the ask was kept pending for ever, and the registration counted
// the reserved node.
func TestExecutorAskAboveEveryNodeIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		amNode  bool
		ask     cluster.Resource
		wantMax cluster.Resource
	}{
		{"larger than the only node", false, cluster.Resource{MemoryMB: 4096, Cores: 1}, cluster.Resource{MemoryMB: 1024, Cores: 2}},
		{"more cores than the only node", false, cluster.Resource{MemoryMB: 512, Cores: 3}, cluster.Resource{MemoryMB: 1024, Cores: 2}},
		{"fits only the node reserved for application masters", true, cluster.Resource{MemoryMB: 1536, Cores: 1}, cluster.Resource{MemoryMB: 1024, Cores: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestCore(t)
			if tc.amNode {
				const am = "127.0.0.1:9000"
				c.amNodes[am] = true
				c.registerNode(&messages.NmRegister{NodeId: am, Address: am, Host: "127.0.0.1", Capability: cluster.Resource{MemoryMB: 2048, Cores: 2}.Proto()})
			}
			const worker = "127.0.0.1:1000"
			c.registerNode(&messages.NmRegister{NodeId: worker, Address: worker, Host: "127.0.0.1", Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}.Proto()})
			id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
			reg, err := c.registerAM(&messages.AmRegister{AppId: id})
			if err != nil {
				t.Fatal(err)
			}
			if got := cluster.ResourceFromProto(reg.GetMaxResource()); got != tc.wantMax {
				t.Errorf("the AM's registration says an executor may have %+v; want %+v (what the executors' nodes hold)", got, tc.wantMax)
			}
			resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 2, Resource: tc.ask.Proto()})
			var rte *cluster.ResourceTooLargeError
			if !errors.Is(err, cluster.ErrResourceTooLarge) || !errors.As(err, &rte) {
				t.Fatalf("asking for %+v: %v, %v; want ErrResourceTooLarge", tc.ask, resp, err)
			}
			// A request that fits still works.
			resp, _, err = c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: cluster.Resource{MemoryMB: 256, Cores: 1}.Proto()})
			if err != nil || len(resp.GetAllocated()) != 1 {
				t.Fatalf("a request that fits: %v, %v", resp, err)
			}
			checkNoOversubscription(t, c)
		})
	}
}
