package netty_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// writeEnvelope writes one WireEnvelope frame holding msg.
func writeEnvelope(t *testing.T, c net.Conn, target, senderAddr, senderID string, msg proto.Message) {
	t.Helper()
	payload, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	writeMsg(t, c, &messages.WireEnvelope{Target: target, SenderAddress: senderAddr, SenderId: senderID,
		Type: string(msg.ProtoReflect().Descriptor().FullName()), Payload: payload})
}

// readEnvelope reads the next WireEnvelope frame and decodes its payload
// into msg.
func readEnvelope(t *testing.T, r *bufio.Reader, msg proto.Message) *messages.WireEnvelope {
	t.Helper()
	var e messages.WireEnvelope
	readMsg(t, r, &e)
	if msg != nil {
		if err := proto.Unmarshal(e.GetPayload(), msg); err != nil {
			t.Fatalf("payload of %s: %v", e.GetType(), err)
		}
	}
	return &e
}

// barrier asks env's endpoint-verifier over c and waits for the answer:
// once it is read, env has handled every frame c sent before.
func barrier(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	writeEnvelope(t, c, actor.VerifierName, "", "future$.barrier", &messages.CheckExistence{Name: "x"})
	for {
		var res messages.CheckExistenceResponse
		if e := readEnvelope(t, r, &res); e.GetTarget() == "future$.barrier" {
			return
		}
	}
}

// A third connection that sends a reply to an ask that went to another
// peer, with the ask's true reply-to id, does not complete it: the asker
// gets the real reply, and the forged one is counted.
func TestForgedReplyFromAnotherConnectionIsDropped(t *testing.T) {
	victim, tr := serverWithTransport(t, nil)
	// The peer the victim asks: a client-mode peer on a raw connection.
	real, realR := rawClient(t, victim, "client-real")
	ref, err := victim.RefFromProto(&messages.EndpointRef{Name: "answer", Address: rawID("client-real"), Client: true})
	if err != nil {
		t.Fatal(err)
	}
	f := ref.AskWithTimeout(testutil.Context(t, waitFor), str("question"), actor.RpcTimeout{Duration: waitFor, Key: "test.askTimeout"})
	var q wrapperspb.StringValue
	ask := readEnvelope(t, realR, &q)
	if q.GetValue() != "question" || ask.GetSenderId() == "" {
		t.Fatalf("the peer got %v, want the ask", ask)
	}

	// The third party knows the reply-to id (the worst case) and answers
	// first.
	forger, forgerR := rawClient(t, victim, "client-forger")
	writeEnvelope(t, forger, ask.GetSenderId(), "", "", str("forged"))
	barrier(t, forger, forgerR)

	writeEnvelope(t, real, ask.GetSenderId(), "", "", str("real"))
	res, err := f.Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*wrapperspb.StringValue).GetValue(); got != "real" {
		t.Fatalf("the ask returned %q, want the real reply", got)
	}
	if n := tr.Stats().ForgedReplies; n != 1 {
		t.Errorf("ForgedReplies = %d, want 1", n)
	}
}

// A reply-to id tells nothing about the next: a peer that saw one cannot
// name the asks made to other peers.
func TestReplyIDsAreNotSequential(t *testing.T) {
	victim, _ := serverWithTransport(t, nil)
	_, realR := rawClient(t, victim, "client-real")
	ref, err := victim.RefFromProto(&messages.EndpointRef{Name: "answer", Address: rawID("client-real"), Client: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var prev string
	for range 20 {
		ref.AskWithTimeout(testutil.Context(t, waitFor), str("q"), actor.RpcTimeout{Duration: waitFor, Key: "test.askTimeout"})
		id := readEnvelope(t, realR, nil).GetSenderId()
		if seen[id] {
			t.Fatalf("reply-to id %s used twice", id)
		}
		seen[id] = true
		if prev != "" && len(id) < len("future$.")+8 {
			t.Fatalf("reply-to id %s is short enough to guess", id)
		}
		prev = id
	}
}

// No address written in a frame is dialled: the reply to an ask (an
// endpoint's, a "not found", an undecodable message's failure) goes back
// over the connection the ask came on, whatever its sender_address says.
func TestFrameSenderAddressIsNeverDialled(t *testing.T) {
	server, tr := serverWithTransport(t, nil)
	register(t, server, "echo", newEcho())
	// The address an attacker would have the server connect to.
	trap, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer trap.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := trap.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	client, r := rawClient(t, server, "client-attacker")
	cases := []struct {
		name, target string
		msg          proto.Message
	}{
		{"endpoint reply", "echo", str("hi")},
		{"not found", "missing", str("hi")},
		{"undecodable", "echo", unknownMessage(t)},
	}
	for i, tc := range cases {
		id := "future$.x" + string(rune('a'+i))
		writeEnvelope(t, client, tc.target, trap.Addr().String(), id, tc.msg)
		client.SetReadDeadline(time.Now().Add(waitFor)) //nolint:errcheck
		if e := readEnvelope(t, r, nil); e.GetTarget() != id {
			t.Fatalf("%s: the reply went to %s, want %s over the asker's connection", tc.name, e.GetTarget(), id)
		}
	}
	// Every answer was written: had one been routed by the frame, its dial
	// would have started before.
	barrier(t, client, r)
	select {
	case <-accepted:
		t.Fatal("the server dialled the address written in a frame")
	default:
	}
	if got := tr.Stats().Connections; got != 1 {
		t.Errorf("Connections = %d, want 1 (the attacker's)", got)
	}
}

func protoUnmarshal(b []byte, m proto.Message) error { return proto.Unmarshal(b, m) }
