package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The resource manager's, the application master's and the node manager's
// endpoints fail an ask of a type they do not handle with "Unsupported
// message" (for the resource manager, RmTick is one-way only).
func TestClusterEndpointsRejectUnsupportedAsks(t *testing.T) {
	env, err := actor.NewEnv("test", nil, actor.WithTransport(actor.NewMemNetwork().Transport("127.0.0.1", 1)), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Shutdown(context.Background())
	log := zerolog.Nop()
	rm, err := StartResourceManager(env, ResourceManagerConfig{StagingDir: t.TempDir(), Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Shutdown(context.Background())
	am, err := env.RegisterEndpoint(AMEndpointName, newAMEndpoint(log, actor.RpcAddress{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	nm, err := env.RegisterEndpoint(NodeManagerEndpointName, newNMEndpoint(&NodeManager{log: log}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ref  *actor.Ref
	}{{"resource manager", rm.ref}, {"application master", am}, {"node manager", nm}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := tc.ref.AskSync(ctx, &messages.RmTick{Kind: "nodes"})
			if !errors.Is(err, actor.ErrUnsupportedMessage) || !strings.Contains(err.Error(), "Unsupported message") {
				t.Fatalf("ask RmTick: %v, want Unsupported message", err)
			}
		})
	}
}
