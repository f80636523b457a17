package endpointtest

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

// Env returns an env on a new in-memory network, shut down when t ends.
func Env(t *testing.T) *actor.Env {
	t.Helper()
	env, err := actor.NewEnv("test", nil, actor.WithTransport(actor.NewMemNetwork().Transport("127.0.0.1", 1)), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	return env
}

// RejectsUnsupportedAsk checks that ref fails an ask of RmTick (the
// resource manager's own one-way tick, which no endpoint answers) with
// "Unsupported message".
func RejectsUnsupportedAsk(t *testing.T, ref *actor.Ref) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := ref.AskSync(ctx, &messages.RmTick{Kind: "nodes"})
	if !errors.Is(err, actor.ErrUnsupportedMessage) || !strings.Contains(err.Error(), "Unsupported message") {
		t.Fatalf("ask RmTick: %v, want Unsupported message", err)
	}
}
