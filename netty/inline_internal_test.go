package netty

import (
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// counter counts the one-way messages it receives and answers an ask with
// that count.
type counter struct{ n atomic.Int64 }

func (c *counter) Receive(_ *actor.Context, _ proto.Message) error {
	c.n.Add(1)
	return nil
}

func (c *counter) ReceiveAndReply(ctx *actor.CallContext, _ proto.Message) error {
	ctx.Reply(wrapperspb.Int64(c.n.Load()))
	return nil
}

// One-way messages keep the writer's batches, however quiet the
// connection: Send never writes one itself. Asks and their replies, which
// somebody waits for, still may.
func TestOnlyAsksAndRepliesAreWrittenInline(t *testing.T) {
	const sends, asks = 20, 10
	serverT := NewTransport(WithLogger(zerolog.Nop()), WithInlineQuiet(0))
	clientT := NewTransport(WithLogger(zerolog.Nop()), WithInlineQuiet(0))
	var byServer, byClient atomic.Int64
	testHookInlineWrite = func(c *conn) {
		switch c.t {
		case serverT:
			byServer.Add(1)
		case clientT:
			byClient.Add(1)
		}
	}
	t.Cleanup(func() { testHookInlineWrite = nil })

	server := testServer(t, serverT)
	c := &counter{}
	if _, err := server.RegisterEndpoint("counter", c); err != nil {
		t.Fatal(err)
	}
	client := testServer(t, clientT)
	ref, err := client.SetupEndpointRef(t.Context(), server.Address(), "counter")
	if err != nil {
		t.Fatal(err)
	}
	// Each ask waits for its reply, so the next finds the connection quiet.
	for range asks {
		if _, err := actor.AskAs[*wrapperspb.Int64Value](t.Context(), ref, wrapperspb.String("ask")); err != nil {
			t.Fatal(err)
		}
	}
	if byClient.Load() == 0 {
		t.Fatalf("none of %d asks on a quiet connection was written inline", asks)
	}
	if byServer.Load() == 0 {
		t.Fatalf("none of %d replies on a quiet connection was written inline", asks)
	}
	before := byClient.Load()
	for i := range sends {
		if err := ref.Send(wrapperspb.String("one-way")); err != nil {
			t.Fatal(err)
		}
		// An inline write happens within Send.
		if byClient.Load() != before {
			t.Fatalf("one-way message %d was written inline", i)
		}
	}
	// The ask after the sends is answered after them (per-sender order).
	got, err := actor.AskAs[*wrapperspb.Int64Value](t.Context(), ref, wrapperspb.String("count"))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetValue() != sends {
		t.Fatalf("the endpoint received %d one-way messages, want %d", got.GetValue(), sends)
	}
}
