package nodemanager

import (
	"context"
	"os"
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

// countingRM answers registrations, unregistrations and heartbeats, and
// sends a value on beats for each heartbeat.
type countingRM struct{ beats chan struct{} }

func (countingRM) Receive(*actor.Context, proto.Message) error { return nil }

func (r countingRM) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch msg.(type) {
	case *messages.NmRegister:
		ctx.Reply(&messages.NmRegisterResponse{})
	case *messages.NmHeartbeat:
		select {
		case r.beats <- struct{}{}:
		default:
		}
		ctx.Reply(&messages.NmHeartbeatResponse{})
	case *messages.NmUnregister:
		ctx.Reply(&messages.NmUnregisterResponse{})
	}
	return nil
}

// While Shutdown gives its containers their grace period, the node manager
// goes on heartbeating, so that the resource manager does not take a long
// grace for a lost node. Before, Shutdown ended the loop's heartbeats as it
// began: each failed at once, and the resource manager heard nothing until
// the containers were gone.
func TestHeartbeatsGoOnDuringTheKillGrace(t *testing.T) {
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
	rm := countingRM{beats: make(chan struct{}, 1)}
	if _, err := rmEnv.RegisterEndpoint(cluster.ResourceManagerEndpointName, rm); err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	nmEnv := newEnv("nm", 2)
	nm, err := Start(testutil.Context(t, 10*time.Second), nmEnv, Config{ResourceManager: rmEnv.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: filepath.Join(t.TempDir(), "node"),
		HeartbeatInterval: 10 * time.Millisecond, KillGrace: time.Hour, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	// A container that takes SIGTERM as a sign to note it, and goes on.
	const id = "container_1_0001_01_000001"
	ref := rmEnv.RemoteRef(nmEnv.Address(), cluster.NodeManagerEndpointName)
	resp, err := actor.AskAs[*messages.NmStartContainerResponse](testutil.Context(t, 10*time.Second), ref, &messages.NmStartContainer{
		AppId:     "application_1_0001",
		Container: &messages.RmContainer{ContainerId: id, Resource: &messages.RmResource{MemoryMb: 64, Cores: 1}},
		LaunchContext: &messages.RmLaunchContext{Command: []string{"/bin/sh", "-c",
			`trap 'echo > "$LOG_DIRS/term"' TERM; echo > "$LOG_DIRS/ready"; while :; do sleep 0.01; done`}}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the container to start", func() bool {
		_, err := os.Stat(filepath.Join(resp.GetLogDir(), "ready"))
		return err == nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nm.Shutdown(ctx) }()
	testutil.Eventually(t, 10*time.Second, "the container's SIGTERM", func() bool {
		_, err := os.Stat(filepath.Join(resp.GetLogDir(), "term"))
		return err == nil
	})
	select { // a heartbeat from before Shutdown
	case <-rm.beats:
	default:
	}
	testutil.Recv(t, rm.beats, 5*time.Second, "a heartbeat during the container's grace period")
	cancel() // the grace ends: SIGKILL
	testutil.Recv(t, done, 10*time.Second, "Shutdown to return")
}
