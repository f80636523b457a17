package appmaster

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/endpointtest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// killedRM allocates one container at the first heartbeat, leaves its
// start unanswered (as a resource manager waiting for a node manager that
// does not answer), and says the application is gone (Shutdown) at every
// heartbeat after the start arrived.
type killedRM struct {
	given   bool
	started chan struct{}
	pending []*actor.CallContext // the unanswered starts, kept alive
}

func (*killedRM) Receive(*actor.Context, proto.Message) error { return nil }

func (r *killedRM) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch msg.(type) {
	case *messages.AmAllocate:
		resp := &messages.AmAllocateResponse{}
		switch {
		case !r.given:
			r.given = true
			resp.Allocated = []*messages.RmContainer{{ContainerId: "container_1_0001_01_000002", NodeId: "n:1", NodeHost: "n",
				Resource: &messages.RmResource{MemoryMb: 512, Cores: 1}}}
		case len(r.pending) > 0:
			resp.Shutdown = true
		}
		ctx.Reply(resp)
	case *messages.AmStartContainer:
		r.pending = append(r.pending, ctx)
		close(r.started)
	}
	return nil
}

// When the resource manager says the application is gone, run returns at
// once, ending the container starts it still waits for. Before, run first
// waited for every start it began, and a start the resource manager had
// not answered (its node manager hung) was ended only by
// spark.rpc.askTimeout (120s): the killed application's master kept
// running that long.
func TestShutdownDoesNotWaitForUnansweredStarts(t *testing.T) {
	rm := &killedRM{started: make(chan struct{})}
	env := endpointtest.Env(t)
	ref, err := env.RegisterEndpoint("rm", rm)
	if err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set(cluster.KeyHeartbeatIntervalMs, "1").Set(cluster.KeyInitialAllocInterval, "1ms")
	a, err := newAllocator(env, ref, "application_1_0001", "spark://CoarseGrainedScheduler@127.0.0.1:1", 1,
		cluster.Resource{MemoryMB: 512, Cores: 1}, conf, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool, 1)
	go func() { done <- a.run(ctx) }()
	defer func() { cancel(); <-done }()
	testutil.Recv(t, rm.started, 10*time.Second, "the container's start")
	select {
	case shutdown := <-done:
		done <- shutdown // for the deferred wait
		if !shutdown {
			t.Fatal("run returned false, want true (the resource manager said the application is gone)")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the resource manager said the application is gone, and run has not returned 5s later: " +
			"it waits for a container start that only spark.rpc.askTimeout (120s) ends")
	}
}
