package appmaster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/endpointtest"
	"google.golang.org/protobuf/proto"
)

// muteRM takes every ask and answers none.
type muteRM struct{}

func (muteRM) Receive(*actor.Context, proto.Message) error             { return nil }
func (muteRM) ReceiveAndReply(*actor.CallContext, proto.Message) error { return nil }

// An allocate heartbeat the resource manager does not answer times out
// after spark.sparkrpc.yarn.am.allocateTimeout, and its error names that
// key. Before, it timed out after a fixed 30 s and named
// spark.yarn.scheduler.heartbeat.interval-ms, which sets how often the AM
// heartbeats and changes nothing of the wait.
func TestAllocateTimeoutFollowsTheKeyItNames(t *testing.T) {
	env := endpointtest.Env(t)
	ref, err := env.RegisterEndpoint("rm", muteRM{})
	if err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set(cluster.KeyAMAllocateTimeout, "100ms")
	a, err := newAllocator(env, ref, "application_1_0001", "spark://CoarseGrainedScheduler@127.0.0.1:1", 1,
		cluster.Resource{MemoryMB: 512, Cores: 1}, conf, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = a.allocate(ctx)
	var te *actor.RpcTimeoutError
	if !errors.As(err, &te) || te.Key != cluster.KeyAMAllocateTimeout || te.Duration != 100*time.Millisecond {
		t.Fatalf("allocate against a mute resource manager = %v; want a timeout of 100ms naming %s", err, cluster.KeyAMAllocateTimeout)
	}
	bad := actor.NewConf().Set(cluster.KeyAMAllocateTimeout, "soon")
	if _, err := newAllocator(env, ref, "application_1_0001", "spark://CoarseGrainedScheduler@127.0.0.1:1", 1,
		cluster.Resource{MemoryMB: 512, Cores: 1}, bad, zerolog.Nop()); err == nil {
		t.Error("newAllocator with a malformed allocate timeout succeeded")
	}
}
