package netty_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// orderedSink records the sequence numbers of the messages it receives,
// each an 8-byte big-endian number in a BytesValue, once its gate opens.
type orderedSink struct {
	gate chan struct{}
	got  chan uint64
}

func (s *orderedSink) Receive(_ *actor.Context, msg proto.Message) error {
	<-s.gate
	s.got <- binary.BigEndian.Uint64(msg.(*wrapperspb.BytesValue).GetValue())
	return nil
}

// A flood to an endpoint that does not keep up does not hold up what goes
// to another endpoint over the same connection: the sender keeps the flood
// within the endpoint's credit, so the connection stays readable and an
// ask to an idle endpoint is answered while the flooded one is blocked.
// Once it catches up, it gets the whole flood, in order.
func TestFloodToOneEndpointDoesNotBlockAsksToAnother(t *testing.T) {
	const n = 2000
	conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "64")
	server, _ := serverWithTransport(t, conf)
	sink := &orderedSink{gate: make(chan struct{}), got: make(chan uint64, n)}
	register(t, server, "flooded", sink)
	register(t, server, "echo", newEcho())
	opened := false
	t.Cleanup(func() {
		if !opened {
			close(sink.gate)
		}
	})
	client := newClientEnv(t, "flooder", nil)
	flooded := lookup(t, client, server.Address(), "flooded")
	echo := lookup(t, client, server.Address(), "echo")
	for i := range n {
		payload := binary.BigEndian.AppendUint64(nil, uint64(i))
		if err := flooded.Send(wrapperspb.Bytes(payload)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	// The flood is 30 times the connection's bound of 64 messages; the
	// ask goes behind it.
	for i := range 3 {
		if got := askString(t, echo, "ping"); got != "ping" {
			t.Fatalf("ask %d: %q", i, got)
		}
	}
	close(sink.gate)
	opened = true
	for i := range uint64(n) {
		select {
		case got := <-sink.got:
			if got != i {
				t.Fatalf("message %d arrived as number %d", got, i)
			}
		case <-time.After(waitFor):
			t.Fatalf("only %d of %d messages arrived", i, n)
		}
	}
}

// A flood of small frames is charged more than its bytes against the byte
// credit: with 256 KiB of credit per endpoint, 1 KiB frames to an endpoint
// that processes nothing get 11 frames, not 256, to the receiver, so an ask
// to another endpoint waits behind 11 KiB, not 256 KiB. The rest waits at
// the sender and arrives, in order, once the endpoint goes on.
func TestSmallFramesAreChargedWhatTheyHoldUp(t *testing.T) {
	const n = 200
	conf := actor.NewConf().Set(netty.KeyMaxInFlightBytes, "1m") // credit: 256 KiB an endpoint
	server, tr := serverWithTransport(t, conf)
	sink := &orderedSink{gate: make(chan struct{}), got: make(chan uint64, n)}
	register(t, server, "flooded", sink)
	register(t, server, "echo", newEcho())
	opened := false
	t.Cleanup(func() {
		if !opened {
			close(sink.gate)
		}
	})
	client := newClientEnv(t, "flooder", nil)
	flooded := lookup(t, client, server.Address(), "flooded")
	echo := lookup(t, client, server.Address(), "echo")
	received := func() uint64 {
		var sum uint64
		for _, ps := range tr.PeerStats() {
			sum += ps.ReceivedBytes
		}
		return sum
	}
	before := received()
	for i := range n {
		payload := binary.BigEndian.AppendUint64(make([]byte, 0, 1024), uint64(i))
		if err := flooded.Send(wrapperspb.Bytes(payload[:1024])); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	// The ask's reply comes after everything sent before it was read.
	if got := askString(t, echo, "ping"); got != "ping" {
		t.Fatalf("ask: %q", got)
	}
	if got := received() - before; got > 16<<10 {
		t.Fatalf("the receiver read %d bytes of a flood of 1 KiB frames to an endpoint with 256 KiB of credit; want 11 frames' worth", got)
	}
	close(sink.gate)
	opened = true
	for i := range uint64(n) {
		select {
		case got := <-sink.got:
			if got != i {
				t.Fatalf("message %d arrived as number %d", got, i)
			}
		case <-time.After(waitFor):
			t.Fatalf("only %d of %d messages arrived", i, n)
		}
	}
}

// A peer that has accepted this side's credit and then sends an endpoint
// more than its credit is cut off: the connection closes, and the rest of
// the env still serves.
func TestPeerIgnoringEndpointCreditIsCutOff(t *testing.T) {
	conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "64") // credit: 4 messages
	server, _ := serverWithTransport(t, conf)
	g := &gated{first: make(chan struct{}), gate: make(chan struct{})}
	register(t, server, "blocked", g)
	register(t, server, "echo", newEcho())
	t.Cleanup(func() { close(g.gate) })
	c, _ := rawClient(t, server, "client-greedy")
	writeMsg(t, c, &messages.WireEnvelope{Target: "credit$", Type: "sparkrpc.credit.Accept"})
	payload, _ := proto.Marshal(wrapperspb.String("x"))
	for range 32 {
		// Not every write may succeed: the server closes the connection.
		b, _ := proto.Marshal(&messages.WireEnvelope{Target: "blocked", Type: "google.protobuf.StringValue", Payload: payload})
		if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)); err != nil { //nolint:gosec // small
			break
		}
	}
	expectClosed(t, c)
	stillServes(t, server)
}
