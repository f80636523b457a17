package appmaster

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
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

// startsRM is a resource manager that allocates one container, at the
// first heartbeat, and fails its start (fail) or never answers it. Every
// heartbeat's release list is sent on releases, every start on starts.
type startsRM struct {
	fail     bool
	given    bool
	releases chan []string
	starts   chan struct{}
}

func (*startsRM) Receive(*actor.Context, proto.Message) error { return nil }

func (r *startsRM) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch m := msg.(type) {
	case *messages.AmAllocate:
		select {
		case r.releases <- m.GetRelease():
		default: // a test that does not read them
		}
		resp := &messages.AmAllocateResponse{}
		if !r.given {
			r.given = true
			resp.Allocated = []*messages.RmContainer{{ContainerId: "container_1_0001_01_000002", NodeId: "n:1", NodeHost: "n",
				Resource: &messages.RmResource{MemoryMb: 512, Cores: 1}}}
		}
		ctx.Reply(resp)
	case *messages.AmStartContainer:
		r.starts <- struct{}{}
		if r.fail {
			ctx.SendFailure(errors.New("the node manager is gone"))
		}
	}
	return nil
}

// newStartsAllocator returns an allocator of one executor whose resource
// manager is rm, heartbeating every millisecond, and the executors it
// reports lost.
func newStartsAllocator(t *testing.T, rm *startsRM) (*allocator, chan string) {
	t.Helper()
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
	lost := make(chan string, 16)
	a.onLost = func(id, _ string) { lost <- id }
	return a, lost
}

// A container whose start fails is given back to the resource manager in
// the next heartbeat's release list, as Spark's YarnAllocator releases a
// container it could not launch in: the start may have failed on the way
// back, with the executor running. Before, the allocator forgot the
// container and the resource manager kept it for the application.
func TestAFailedStartReleasesItsContainer(t *testing.T) {
	rm := &startsRM{fail: true, releases: make(chan []string, 1024), starts: make(chan struct{}, 16)}
	a, lost := newStartsAllocator(t, rm)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool, 1)
	go func() { done <- a.run(ctx) }()
	defer func() { cancel(); <-done }()
	testutil.Recv(t, lost, 10*time.Second, "the executor lost by its failed start")
	deadline := time.After(10 * time.Second)
	for {
		select {
		case rel := <-rm.releases:
			if slices.Contains(rel, "container_1_0001_01_000002") {
				return
			}
		case <-deadline:
			t.Fatal("the container whose start failed was never released")
		}
	}
}

// When the allocator stops while a container's start is unanswered, run
// returns only once that start's goroutine has ended, and the start, ended
// by the stop, is not an executor lost. Before, the goroutine outlived run
// and reported the executor lost (and counted a failure) after the
// application master had finished.
func TestStopEndsTheStartsItWaitsFor(t *testing.T) {
	rm := &startsRM{releases: make(chan []string, 1024), starts: make(chan struct{}, 16)}
	a, lost := newStartsAllocator(t, rm)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool, 1)
	go func() { done <- a.run(ctx) }()
	testutil.Recv(t, rm.starts, 10*time.Second, "the container's start")
	cancel()
	testutil.Recv(t, done, 10*time.Second, "run to return")
	testutil.Eventually(t, 10*time.Second, "the start's goroutine to end", func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "appmaster.(*allocator).launch.func")
	})
	select {
	case id := <-lost:
		t.Fatalf("executor %s reported lost after the allocator stopped", id)
	default:
	}
	a.mu.Lock()
	failures := a.failures
	a.mu.Unlock()
	if failures != 0 {
		t.Fatalf("%d executor failures counted after the allocator stopped", failures)
	}
}
