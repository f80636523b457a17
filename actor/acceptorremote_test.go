package actor_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// stringsFromAfar answers StringValue and Int64Value asks, and takes only
// StringValue from other envs.
type stringsFromAfar struct{ *actor.Router }

func (stringsFromAfar) Accepts(name protoreflect.FullName) bool {
	return name == "google.protobuf.StringValue"
}

// An endpoint's Acceptor holds whatever the transport: a transport that
// hands messages to Deliver without asking it (as the in-memory network
// does) still has a refused type refused, with an error that matches
// ErrUnsupportedMessage, while the same type from the endpoint's own env
// is handled. Before, Deliver posted it.
func TestAcceptorHoldsForDeliveredMessages(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	r := actor.NewRouter()
	actor.HandleAsk(r, func(_ *actor.CallContext, m *wrapperspb.StringValue) (*wrapperspb.StringValue, error) { return m, nil })
	actor.HandleAsk(r, func(_ *actor.CallContext, m *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) { return m, nil })
	local := register(t, server, "picky", stringsFromAfar{r})
	remote := setupRef(t, client, server, "picky")
	ctx := testutil.Context(t, testTimeout)
	if _, err := remote.AskSync(ctx, wrapperspb.Int64(7)); !errors.Is(err, actor.ErrUnsupportedMessage) {
		t.Errorf("a refused type from another env: %v, want an error that matches ErrUnsupportedMessage", err)
	}
	if _, err := remote.AskSync(ctx, wrapperspb.String("s")); err != nil {
		t.Errorf("an accepted type from another env: %v", err)
	}
	if _, err := local.AskSync(ctx, wrapperspb.Int64(7)); err != nil {
		t.Errorf("the refused type from the endpoint's own env: %v", err)
	}
}
