package nodemanager

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// flakyRM registers nodes, fails heartbeats while failing is set, and
// records the completed containers of every heartbeat it answers, and the
// node's unregistration.
type flakyRM struct {
	failing      atomic.Bool
	failed       chan []*messages.RmContainerStatus // the completed of each failed heartbeat
	mu           sync.Mutex
	reported     []*messages.RmContainerStatus
	unregistered bool
}

func (*flakyRM) Receive(*actor.Context, proto.Message) error { return nil }

func (r *flakyRM) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch m := msg.(type) {
	case *messages.NmRegister:
		ctx.Reply(&messages.NmRegisterResponse{})
	case *messages.NmHeartbeat:
		if r.failing.Load() {
			select {
			case r.failed <- m.GetCompleted():
			default:
			}
			ctx.SendFailure(errors.New("resource manager busy"))
			return nil
		}
		r.mu.Lock()
		r.reported = append(r.reported, m.GetCompleted()...)
		r.mu.Unlock()
		ctx.Reply(&messages.NmHeartbeatResponse{})
	case *messages.NmUnregister:
		r.mu.Lock()
		r.unregistered = true
		r.mu.Unlock()
		ctx.Reply(&messages.NmUnregisterResponse{})
	}
	return nil
}

// A container's completion that a failed heartbeat put back in the queue
// is reported when the node manager shuts down with no container running,
// before it unregisters. Before, Shutdown sent its last heartbeat only
// when it stopped containers itself, so the resource manager reported the
// container as released on a node that shut down (exit -100) rather than
// with its exit code and the end of its stderr. The same went for a
// container that ended within a heartbeat of the shutdown, whose status
// the loop's heartbeat, ended by the shutdown, put back.
func TestShutdownReportsTheQueuedStatuses(t *testing.T) {
	net := actor.NewMemNetwork()
	newEnv := func(name string, port int) *actor.Env {
		env, err := actor.NewEnv(name, nil, actor.WithTransport(net.Transport("127.0.0.1", port)), actor.WithLogger(zerolog.Nop()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		return env
	}
	rmEnv := newEnv("rm", 1)
	rm := &flakyRM{failed: make(chan []*messages.RmContainerStatus, 1)}
	rm.failing.Store(true)
	if _, err := rmEnv.RegisterEndpoint(cluster.ResourceManagerEndpointName, rm); err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	nmEnv := newEnv("nm", 2)
	// Heartbeats only when a container completes (the kick), not on the tick.
	nm, err := Start(testutil.Context(t, 10*time.Second), nmEnv, Config{ResourceManager: rmEnv.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: filepath.Join(t.TempDir(), "node"),
		HeartbeatInterval: time.Hour, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Shutdown(context.Background()) })

	const id = "container_1_0001_01_000001"
	ref := rmEnv.RemoteRef(nmEnv.Address(), cluster.NodeManagerEndpointName)
	if _, err := ref.AskSync(testutil.Context(t, 10*time.Second), &messages.NmStartContainer{AppId: "application_1_0001",
		Container:     &messages.RmContainer{ContainerId: id, Resource: &messages.RmResource{MemoryMb: 64, Cores: 1}},
		LaunchContext: &messages.RmLaunchContext{Command: []string{"/bin/sh", "-c", "echo boom >&2; exit 13"}}}); err != nil {
		t.Fatal(err)
	}
	// The completion's heartbeat fails: the status goes back to the queue.
	for sent := false; !sent; {
		for _, st := range testutil.Recv(t, rm.failed, 10*time.Second, "a failed heartbeat") {
			sent = sent || st.GetContainerId() == id
		}
	}
	testutil.Eventually(t, 10*time.Second, "the status back in the queue", func() bool {
		nm.mu.Lock()
		defer nm.mu.Unlock()
		return len(nm.completed) == 1
	})

	// The resource manager answers again; the node manager shuts down.
	rm.failing.Store(false)
	if err := nm.Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for _, st := range rm.reported {
		if st.GetContainerId() == id && st.GetExitStatus() == 13 {
			return
		}
	}
	t.Fatalf("container %s exited with code 13 and the node manager shut down (unregistered: %v) without reporting it; the resource manager got %v",
		id, rm.unregistered, rm.reported)
}
