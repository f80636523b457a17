package appmaster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The application master's endpoint fails an ask of a type it does not handle with
// "Unsupported message" (RmTick is the resource manager's own, one-way).
func TestEndpointRejectsUnsupportedAsks(t *testing.T) {
	env, err := actor.NewEnv("test", nil, actor.WithTransport(actor.NewMemNetwork().Transport("127.0.0.1", 1)), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Shutdown(context.Background())
	log := zerolog.Nop()
	ref, err := env.RegisterEndpoint(cluster.AMEndpointName, newAMEndpoint(log, actor.RpcAddress{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = ref.AskSync(ctx, &messages.RmTick{Kind: "nodes"})
	if !errors.Is(err, actor.ErrUnsupportedMessage) || !strings.Contains(err.Error(), "Unsupported message") {
		t.Fatalf("ask RmTick: %v, want Unsupported message", err)
	}
}
