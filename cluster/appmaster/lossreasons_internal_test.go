package appmaster

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/endpointtest"
	"github.com/sparkrpc/sparkrpc/messages"
)

// startingRM is a resource manager that starts every container it is
// asked to.
type startingRM struct{}

func (startingRM) Receive(*actor.Context, proto.Message) error { return nil }

func (startingRM) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch msg.(type) {
	case *messages.AmStartContainer:
		ctx.Reply(&messages.NmStartContainerResponse{})
	default:
		ctx.Reply(&messages.AmAllocateResponse{})
	}
	return nil
}

// An application master runs as long as its application; with dynamic
// allocation its executors come and go all along. The loss reason of
// each is asked by the driver soon after the loss (on the disconnect, and
// once more when it removes the executor), then never again: it must not
// be kept for ever. Before, allocator.reasons kept one entry (with the
// container's diagnostics, up to 2 KiB of stderr) per executor ever lost.
func TestLossReasonsAreNotKeptForEver(t *testing.T) {
	env := endpointtest.Env(t)
	ref, err := env.RegisterEndpoint("rm", startingRM{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := newAllocator(env, ref, "application_1_0001", "spark://CoarseGrainedScheduler@127.0.0.1:1", 1,
		cluster.Resource{MemoryMB: 512, Cores: 1}, actor.NewConf(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); a.starts.Wait() }()

	const cycles = 1500
	for i := range cycles {
		cid := fmt.Sprintf("container_1_0001_01_%06d", i+2)
		a.launch(ctx, &messages.RmContainer{ContainerId: cid, NodeId: "n:1", NodeHost: "n",
			Resource: &messages.RmResource{MemoryMb: 512, Cores: 1}})
		id := executorOf(a, cid)
		// Dynamic allocation releases it; its container completes.
		a.kill([]string{id}, true)
		a.completed(&messages.RmContainerStatus{ContainerId: cid, ExitStatus: cluster.ContainerExitKilledByAM,
			Diagnostics: "Container released by the application master"})
		// The driver asks why, twice: both get the reason.
		for range 2 {
			known := make(chan bool, 1)
			a.lossReason(id, func(_ lossReason, k bool) { known <- k })
			if !<-known {
				t.Fatalf("cycle %d: the loss reason of executor %s, just lost, is unknown", i, id)
			}
		}
	}
	a.mu.Lock()
	reasons, running, byExec, waiting := a.reasons.Len(), len(a.running), len(a.byExecutor), len(a.waiting)
	a.mu.Unlock()
	if running != 0 || byExec != 0 || waiting != 0 {
		t.Fatalf("after %d executors lost: %d running, %d by executor, %d waiting", cycles, running, byExec, waiting)
	}
	if reasons > 1000 {
		t.Fatalf("after %d executors lost the allocator keeps %d loss reasons; want at most 1000", cycles, reasons)
	}
}

// executorOf returns the executor id the allocator gave container cid.
func executorOf(a *allocator, cid string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running[cid].executorID
}
