package cluster

import (
	"strconv"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// local-cluster[N,C,M] means N executors, as in Spark: the application
// master has a node of its own, and each worker runs an executor with the
// worker's C cores.
func TestLocalClusterFitsOneExecutorPerWorker(t *testing.T) {
	for _, tc := range []struct {
		master, mode string
		conf         []string
		want         int
	}{
		{"local-cluster[2,1,1024]", "client", nil, 2},
		{"local-cluster[2,1,1024]", "cluster", nil, 2},
		{"local-cluster[3,1,512]", "cluster", nil, 3},
		{"local-cluster[1,1,512]", "client", nil, 1},
		{"local-cluster[2,4,4096]", "client", nil, 2},
		// Smaller executors than a worker: as many as fit.
		{"local-cluster[2,4,4096]", "client", []string{KeyExecutorCores, "2"}, 4},
	} {
		m, err := ParseMaster(tc.master)
		if err != nil {
			t.Fatal(err)
		}
		conf := actor.NewConf()
		for i := 0; i+1 < len(tc.conf); i += 2 {
			conf.Set(tc.conf[i], tc.conf[i+1])
		}
		// What Submit sets for a local cluster.
		conf.SetIfMissing(KeyDriverMemory, "512m").SetIfMissing(KeyExecutorMemory, "512m").
			SetIfMissing(KeyExecutorCores, strconv.Itoa(m.WorkerCores))
		n, err := executorsThatFit(conf, m, tc.mode)
		if err != nil || n != tc.want {
			t.Errorf("%s %s %v: %d executors fit (%v), want %d", tc.master, tc.mode, tc.conf, n, err, tc.want)
		}
	}
}

// A node reserved for application masters takes the AM containers and no
// executor; the workers take the executors.
func TestAMNodeIsReservedForApplicationMasters(t *testing.T) {
	c, _ := newTestCore(t)
	am := &messages.NmRegister{NodeId: "127.0.0.1:9000", Address: "127.0.0.1:9000", Host: "127.0.0.1", Capability: Resource{512, 1}.proto()}
	c.amNodes[am.NodeId] = true
	c.registerNode(am)
	for _, addr := range []string{"127.0.0.1:1000", "127.0.0.1:2000"} {
		c.registerNode(&messages.NmRegister{NodeId: addr, Address: addr, Host: "127.0.0.1", Capability: Resource{1024, 1}.proto()})
	}
	id, acts := submitApp(t, c, Resource{512, 1})
	if len(acts) != 1 || acts[0].nodeAddress != am.Address {
		t.Fatalf("AM started on %+v, want the AM node", acts)
	}
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	// Small executors that would fit on the AM node too.
	resp, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 5, Resource: Resource{256, 1}.proto()})
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
	_, acts = submitApp(t, c, Resource{512, 1})
	if len(acts) != 1 || acts[0].nodeAddress == am.Address {
		t.Fatalf("second AM started on %+v, want a worker", acts)
	}
}
