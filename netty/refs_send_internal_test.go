package netty

import (
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// sizes reports the size of every message it receives, one-way or asked.
type sizes struct{ got chan int }

func (s *sizes) Receive(_ *actor.Context, m proto.Message) error {
	s.got <- proto.Size(m)
	return nil
}

func (s *sizes) ReceiveAndReply(_ *actor.CallContext, m proto.Message) error {
	s.got <- proto.Size(m)
	return nil
}

// refsPair starts a server with an endpoint "sink" and a client transport
// connected to it whose peer has read the server's credit offer (so that
// its sends define references), and returns the client's transport, the
// server's address, the peer and the sink.
func refsPair(t *testing.T, opts ...Option) (*Transport, *actor.Env, *actor.Env, *peer, *sizes) {
	t.Helper()
	clientT := NewTransport(append([]Option{WithLogger(zerolog.Nop())}, opts...)...)
	server := testServer(t, NewTransport(WithLogger(zerolog.Nop())))
	s := &sizes{got: make(chan int, 16)}
	if _, err := server.RegisterEndpoint("sink", s); err != nil {
		t.Fatal(err)
	}
	client := testServer(t, clientT)
	ref, err := client.SetupEndpointRef(testutil.Context(t, reconnectWait), server.Address(), "sink")
	if err != nil {
		t.Fatal(err)
	}
	// Messages by reference, one at a time, until the last write carried
	// one frame (the first ones go with the credit's accept and the
	// definition).
	v, _ := clientT.peers.Load(server.Address().HostPort())
	p := v.(*peer)
	quiet := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.conn != nil && !p.conn.busy && p.out.empty() && p.credit.limN > 0 && p.conn.lastFrames <= 1
	}
	for i := 0; i < 3 || !quiet(); i++ {
		if i == 100 {
			t.Fatal("the connection's writes never carried one frame")
		}
		if err := ref.Send(wrapperspb.String("x")); err != nil {
			t.Fatal(err)
		}
		s.expect(t, "a warm-up message", proto.Size(wrapperspb.String("x")))
	}
	return clientT, client, server, p, s
}

// expect waits for a message of size bytes.
func (s *sizes) expect(t *testing.T, what string, size int) {
	t.Helper()
	select {
	case n := <-s.got:
		if n != size {
			t.Fatalf("%s: got a message of %d bytes, want %d", what, n, size)
		}
	case <-time.After(reconnectWait):
		t.Fatalf("%s: not delivered", what)
	}
}

// A Send that defines new names on a quiet connection and is written
// inline must write the definition and its frame. Before, a frame that did
// not fit the definition's small chunk went into a second chunk, of which
// the inline write (which writes one chunk) wrote nothing: the frame was
// lost without a word.
func TestInlineWriteAfterADefinitionSendsTheFrame(t *testing.T) {
	clientT, client, server, _, s := refsPair(t, WithInlineQuiet(0))
	// An awaited message (its sender is an actor, not a future) with new
	// names, too large to share the definition's 4 KiB chunk.
	target := &protoactor.PID{Address: server.Address().HostPort(), Id: "sink"}
	sender := &protoactor.PID{Address: client.Address().HostPort(), Id: "worker"}
	msg := wrapperspb.Bytes(make([]byte, 6000))
	if err := clientT.Send(target, sender, msg); err != nil {
		t.Fatal(err)
	}
	s.expect(t, "the 6000-byte message", proto.Size(msg))
}

// A Send that defines new names and then fails to encode its message must
// still wake the writer for the definition it queued. Before, it did not,
// and every later Send found the outbox not empty and woke nobody either:
// nothing more was written to the peer.
func TestEncodeFailureAfterADefinitionKeepsTheOutboxMoving(t *testing.T) {
	clientT, _, server, _, s := refsPair(t)
	target := &protoactor.PID{Address: server.Address().HostPort(), Id: "sink"}
	sender := &protoactor.PID{Address: server.Address().HostPort(), Id: "worker"} // new names
	if err := clientT.Send(target, sender, wrapperspb.String("\xff")); err == nil {
		t.Fatal("a string that is not UTF-8 was sent")
	}
	if err := clientT.Send(target, sender, wrapperspb.String("ok")); err != nil {
		t.Fatal(err)
	}
	s.expect(t, "the message after a failed one", proto.Size(wrapperspb.String("ok")))
}
