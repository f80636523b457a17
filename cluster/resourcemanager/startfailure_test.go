package resourcemanager_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// An executor container whose node manager cannot start it is complete:
// its resources are free for another container, and the application
// master hears of it with its next allocation. (The deterministic
// simulation found the resource manager holding such a container until
// the node was lost.)
func TestAContainerThatCannotStartIsFreed(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell("sleep 30", cluster.Resource{MemoryMB: 256, Cores: 1})
	t.Cleanup(func() { _ = h.Kill(context.Background()) })
	env, err := actor.NewEnv("am", nil, actor.WithTransport(mc.Net.ClientTransport()), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	rm := env.RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
	ctx := testutil.Context(t, 10*time.Second)
	testutil.Eventually(t, 10*time.Second, "the AM's registration", func() bool {
		_, err := actor.AskAs[*messages.AmRegisterResponse](ctx, rm, &messages.AmRegister{AppId: h.AppID(), Host: "127.0.0.1"})
		return err == nil
	})
	executor := cluster.Resource{MemoryMB: 512, Cores: 1} // the node has room for one beside the AM
	allocate := func() *messages.AmAllocateResponse {
		resp, err := actor.AskAs[*messages.AmAllocateResponse](testutil.Context(t, 5*time.Second), rm, &messages.AmAllocate{AppId: h.AppID(), NumPending: 1,
			Resource: executor.Proto()})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := allocate().GetAllocated()
	if len(first) != 1 {
		t.Fatalf("allocated %v, want one container", first)
	}
	id := first[0].GetContainerId()
	_, err = actor.AskAs[*messages.NmStartContainerResponse](ctx, rm, &messages.AmStartContainer{AppId: h.AppID(), ContainerId: id,
		LaunchContext: &messages.RmLaunchContext{Command: []string{"/nonexistent/sparkrpc-test-program"}}})
	if err == nil {
		t.Fatal("a container with no program started")
	}
	var completed *messages.RmContainerStatus
	testutil.Eventually(t, 10*time.Second, "another container in the place of the one that did not start", func() bool {
		resp := allocate()
		for _, st := range resp.GetCompleted() {
			if st.GetContainerId() == id {
				completed = st
			}
		}
		return len(resp.GetAllocated()) == 1
	})
	if completed == nil || completed.GetExitStatus() != cluster.ContainerExitInvalid {
		t.Errorf("the container that did not start completed as %v, want exit status %d", completed, cluster.ContainerExitInvalid)
	}
}
