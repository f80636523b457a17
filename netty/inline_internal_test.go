package netty

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
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
	serverT.hooks.inlineWrite = func(*conn) { byServer.Add(1) }
	clientT.hooks.inlineWrite = func(*conn) { byClient.Add(1) }

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

// The quiet time that lets Send write an ask itself counts from the end of
// the connection's last write. Counted from its start, a write slower than
// the quiet time made the ask sent right after it look quiet too, and a
// stream of asks or replies went out one system call each.
func TestAnAskRightAfterASlowInlineWriteIsNotWrittenInline(t *testing.T) {
	const quiet = time.Millisecond
	clock := testutil.NewClock(time.Now())
	clientT := NewTransport(WithLogger(zerolog.Nop()), WithInlineQuiet(quiet))
	clientT.now = clock.Now
	var inline atomic.Int64
	clientT.hooks.inlineWrite = func(*conn) {
		inline.Add(1)
		clock.Advance(2 * quiet) // this write takes twice the quiet time
	}
	released := make(chan struct{}, 1)
	clientT.hooks.released = func(*conn) {
		select {
		case released <- struct{}{}:
		default:
		}
	}

	server := testServer(t, NewTransport(WithLogger(zerolog.Nop())))
	if _, err := server.RegisterEndpoint("counter", &counter{}); err != nil {
		t.Fatal(err)
	}
	client := testServer(t, clientT)
	ref, err := client.SetupEndpointRef(t.Context(), server.Address(), "counter")
	if err != nil {
		t.Fatal(err)
	}
	ask := func() {
		t.Helper()
		if _, err := actor.AskAs[*wrapperspb.Int64Value](t.Context(), ref, wrapperspb.String("ask")); err != nil {
			t.Fatal(err)
		}
	}
	// A reply can arrive before the writer that wrote its ask has noted
	// the write's end: wait for that before the clock moves on.
	v, ok := clientT.peers.Load(server.Address().HostPort())
	if !ok {
		t.Fatal("no peer for the server")
	}
	p := v.(*peer)
	writtenAll := func() {
		t.Helper()
		for {
			p.mu.Lock()
			idle := p.conn != nil && !p.conn.busy && p.out.empty()
			p.mu.Unlock()
			if idle {
				return
			}
			select {
			case <-released:
			case <-t.Context().Done():
				t.Fatal(t.Context().Err())
			}
		}
	}

	writtenAll()
	clock.Advance(10 * quiet)
	before := inline.Load()
	ask()
	if got := inline.Load() - before; got != 1 {
		t.Fatalf("an ask on a connection quiet for 10 times the quiet time: %d inline writes, want 1", got)
	}
	// The clock has not moved since that write ended.
	ask()
	if got := inline.Load() - before; got != 1 {
		t.Fatalf("the ask sent as a write twice the quiet time long ended was written inline (%d inline writes, want 1)", got)
	}
	writtenAll()
	clock.Advance(10 * quiet)
	ask()
	if got := inline.Load() - before; got != 2 {
		t.Fatalf("an ask after the quiet time: %d inline writes in all, want 2", got)
	}
}
