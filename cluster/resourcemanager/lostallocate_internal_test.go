package resourcemanager

import (
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// expectResponse sets the id of the allocate response an application
// master expects next (the one after the last it received), as the
// allocator does, on a request of a protocol that has the field.
func expectResponse(req *messages.AmAllocate, id int64) *messages.AmAllocate {
	m := req.ProtoReflect()
	if fd := m.Descriptor().Fields().ByName("expected_response_id"); fd != nil {
		m.Set(fd, protoreflect.ValueOfInt64(id))
	}
	return req
}

func responseID(resp *messages.AmAllocateResponse) int64 {
	m := resp.ProtoReflect()
	if fd := m.Descriptor().Fields().ByName("response_id"); fd != nil {
		return m.Get(fd).Int()
	}
	return 0
}

// An application master whose allocate reply is lost (its connection
// dropped after the resource manager handled the ask, or the ask timed out)
// asks again with what it knew before. What that reply carried must not be
// lost with it: the containers it allocated (else the resource manager holds
// them, unused, until the application ends, and the AM gets others in their
// place) and the containers it reported complete (else the AM counts their
// executors as running for ever, never replaces them and never hears of
// their failure). YARN's ApplicationMasterService answers such a retry
// (same response id) with the reply the AM missed.
// Before, the retry got neither: the containers stayed allocated and
// unused, and the completion was never reported.
func TestLostAllocateReplyLosesNothing(t *testing.T) {
	c, _ := newTestCore(t, cluster.Resource{MemoryMB: 2048, Cores: 4})
	const node = "127.0.0.1:1000"
	exec := cluster.Resource{MemoryMB: 512, Cores: 1}
	id, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})
	if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
		t.Fatal(err)
	}
	resp, _, err := c.allocateFor(expectResponse(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: exec.Proto()}, 1))
	if err != nil || len(resp.GetAllocated()) != 1 {
		t.Fatalf("first allocation: %v, %v", resp, err)
	}
	first := resp.GetAllocated()[0].GetContainerId()
	if _, err := c.startExecutor(id, first, &messages.RmLaunchContext{Command: []string{"sparkrpc", "executor"}}); err != nil {
		t.Fatal(err)
	}
	next := responseID(resp) + 1
	// The executor dies; the node reports it.
	c.heartbeat(&messages.NmHeartbeat{NodeId: node, Completed: []*messages.RmContainerStatus{{ContainerId: first, ExitStatus: 1, Diagnostics: "boom"}}})

	// The AM asks for a replacement; the reply is lost on its way back.
	ask := func() *messages.AmAllocate {
		return expectResponse(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: exec.Proto()}, next)
	}
	lost, _, err := c.allocateFor(ask())
	if err != nil || len(lost.GetAllocated()) != 1 || len(lost.GetCompleted()) != 1 {
		t.Fatalf("the reply that gets lost: %v, %v", lost, err)
	}
	// The AM, which knows nothing new, asks again: the same ask.
	retry, _, err := c.allocateFor(ask())
	if err != nil {
		t.Fatal(err)
	}
	var completed []string
	for _, st := range retry.GetCompleted() {
		completed = append(completed, st.GetContainerId())
	}
	if !slices.Contains(completed, first) {
		t.Errorf("container %s completed (exit 1) in the lost reply only: the retry reports %v; the AM never learns its executor died", first, completed)
	}
	var allocated []string
	for _, ct := range retry.GetAllocated() {
		allocated = append(allocated, ct.GetContainerId())
	}
	want := lost.GetAllocated()[0].GetContainerId()
	if len(allocated) != 1 || allocated[0] != want {
		t.Errorf("the retry allocates %v; want the container of the lost reply, %s, again and nothing more", allocated, want)
	}
	n := c.nodes[node]
	if n.used != (cluster.Resource{MemoryMB: 1024, Cores: 2}) {
		t.Errorf("node uses %+v for the AM and one executor the AM knows of; want 1024 MB and 2 cores (containers held: %d)", n.used, len(n.containers))
	}
	checkNoOversubscription(t, c)
	// Once the AM has the retry's reply, nothing is delivered twice.
	after, _, err := c.allocateFor(expectResponse(&messages.AmAllocate{AppId: id, NumPending: 0, Resource: exec.Proto()}, responseID(retry)+1))
	if err != nil || len(after.GetAllocated()) != 0 || len(after.GetCompleted()) != 0 {
		t.Errorf("after the retry's reply was received: %v, %v; want nothing again", after, err)
	}
}
