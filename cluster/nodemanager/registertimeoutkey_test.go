package nodemanager_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"google.golang.org/protobuf/proto"
)

// muteRM is a resource manager that takes every ask and answers none.
type muteRM struct{}

func (muteRM) Receive(*actor.Context, proto.Message) error             { return nil }
func (muteRM) ReceiveAndReply(*actor.CallContext, proto.Message) error { return nil }

// The timeout of a registration attempt names the key that controls it
// ("This timeout is controlled by KEY"): setting that key changes it. Before,
// the key named (then sparkrpc.nodemanager.registerTimeout) was read
// nowhere: the attempt timed out after a fixed 5s whatever it was set to.
func TestNodeManagerRegisterTimeoutFollowsTheKeyItNames(t *testing.T) {
	const key = nodemanager.KeyRegisterTimeout
	net := actor.NewMemNetwork()
	rm, err := actor.NewEnv("rm", nil, actor.WithTransport(net.Transport("127.0.0.1", 1)), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Shutdown(context.Background())
	if _, err := rm.RegisterEndpoint(cluster.ResourceManagerEndpointName, muteRM{}); err != nil {
		t.Fatal(err)
	}
	env, err := actor.NewEnv("nm", actor.NewConf().Set(key, "200ms"),
		actor.WithTransport(net.Transport("127.0.0.1", 100)), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Shutdown(context.Background())
	log := zerolog.Nop()
	_, err = nodemanager.Start(context.Background(), env, nodemanager.Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 512, Cores: 1}, Dir: t.TempDir(), RegisterTimeout: 2 * time.Second, Logger: &log})
	if !errors.Is(err, cluster.ErrRegistrationFailed) {
		t.Fatalf("error %v, want ErrRegistrationFailed", err)
	}
	var te *actor.RpcTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v: no attempt timed out (want each to time out after %s=200ms)", err, key)
	}
	if te.Key != key || te.Duration != 200*time.Millisecond {
		t.Fatalf("the attempt timed out after %s, controlled by %s; want 200ms, controlled by %s", te.Duration, te.Key, key)
	}
}
