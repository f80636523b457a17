package netty_test

import (
	"encoding/binary"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A stream of messages to one endpoint names its target, sender and type
// once per connection: every frame after the definition carries only the
// reference, so a 16-byte message's frame shrinks from 63 bytes to 30.
func TestRecurringEnvelopeGoesByReference(t *testing.T) {
	const batch = 500
	msg := &messages.BenchPing{Sender: 1, Seq: 2, Payload: make([]byte, 16)}
	server, client := newEnv(t, "server", nil), newEnv(t, "client", nil)
	c := &batchCounter{batch: batch, arrived: make(chan struct{}, 1)}
	register(t, server, "sink", c)
	ref := lookup(t, client, server.Address(), "sink")
	sendBatch := func() {
		t.Helper()
		for range batch {
			if err := ref.Send(msg); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-c.arrived:
		case <-testutil.Context(t, waitFor).Done():
			t.Fatal("the batch did not arrive")
		}
	}
	// The bytes the server read from the client: counted as they are read,
	// so a batch's are all counted once it has arrived (the client counts
	// what it wrote only after its write returns, which can be later).
	received := func() uint64 {
		for _, ps := range server.PeerStats() {
			if ps.Identity == client.Address().HostPort() {
				return ps.ReceivedBytes
			}
		}
		t.Fatal("no peer stats for the client")
		return 0
	}
	sendBatch() // the connection, the credit offers and the definition
	before := received()
	sendBatch()
	perFrame := (received() - before) / batch

	psize := proto.Size(msg)
	byRef := 4 + 2 + 1 + protowire.SizeBytes(psize)
	typ := string(msg.ProtoReflect().Descriptor().FullName())
	byName := 4 + protowire.SizeTag(1) + protowire.SizeBytes(len("sink")) + protowire.SizeTag(4) + protowire.SizeBytes(len(typ)) + 1 + protowire.SizeBytes(psize)
	t.Logf("%d bytes a frame; %d by reference, %d by name", perFrame, byRef, byName)
	if perFrame != uint64(byRef) {
		t.Fatalf("%d bytes a frame, want %d (by reference; %d by name)", perFrame, byRef, byName)
	}
}

// A peer defines a reference once and then sends frames that name only
// it: each is delivered to the endpoint the definition names.
func TestDefinedReferenceIsDelivered(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	e := newEcho()
	register(t, server, "echo", e)
	c, _ := rawClient(t, server, "client-raw")
	stream := defineFrame(t, 1, "echo", "", "google.protobuf.StringValue")
	for _, s := range []string{"one", "two"} {
		payload, err := proto.Marshal(str(s))
		if err != nil {
			t.Fatal(err)
		}
		body := protowire.AppendVarint([]byte{0x30}, 1)
		body = protowire.AppendBytes(protowire.AppendTag(body, 5, protowire.BytesType), payload)
		stream = append(binary.BigEndian.AppendUint32(stream, uint32(len(body))), body...) //nolint:gosec // small
	}
	if _, err := c.Write(stream); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two"} {
		select {
		case m := <-e.got:
			if got := m.(*wrapperspb.StringValue).GetValue(); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		case <-testutil.Context(t, waitFor).Done():
			t.Fatalf("%q not delivered", want)
		}
	}
}
