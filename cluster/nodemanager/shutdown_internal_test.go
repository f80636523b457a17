package nodemanager

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// silentRM registers nodes and answers nothing else: a resource manager
// that stopped answering heartbeats. Each heartbeat it swallows is sent on
// beats.
type silentRM struct{ beats chan struct{} }

func (silentRM) Receive(*actor.Context, proto.Message) error { return nil }

func (r silentRM) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch msg.(type) {
	case *messages.NmRegister:
		ctx.Reply(&messages.NmRegisterResponse{})
	case *messages.NmHeartbeat:
		select {
		case r.beats <- struct{}{}:
		default:
		}
	default:
		ctx.Reply(&messages.NmUnregisterResponse{})
	}
	return nil
}

// A node manager whose heartbeat waits on a resource manager that does not
// answer stops that heartbeat when it shuts down: Shutdown returns with its
// loop ended, and says so when its ctx ended first. Before, the loop's
// heartbeat waited out its own 10-second timeout whatever Shutdown's ctx,
// and a Shutdown whose ctx ended meanwhile returned nil with the loop still
// heartbeating.
func TestShutdownEndsAHeartbeatThatWaits(t *testing.T) {
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
	rm := silentRM{beats: make(chan struct{}, 1)}
	if _, err := rmEnv.RegisterEndpoint(cluster.ResourceManagerEndpointName, rm); err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	nm, err := Start(testutil.Context(t, 10*time.Second), newEnv("nm", 2), Config{ResourceManager: rmEnv.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: filepath.Join(t.TempDir(), "node"),
		HeartbeatInterval: 10 * time.Millisecond, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Recv(t, rm.beats, 10*time.Second, "a heartbeat")

	// The heartbeat's own timeout is 10 seconds; Shutdown's ctx ends before.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := nm.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-nm.loopDone:
	default:
		t.Fatal("the heartbeat loop is still running after Shutdown returned nil")
	}
}
