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

// floodTest is a server with an endpoint, flooded, that processes nothing
// until the test lets it, and an idle echo endpoint, both looked up by a
// client.
type floodTest struct {
	tr            *netty.Transport
	sink          *orderedSink
	flooded, echo *actor.Ref
	opened        bool
	n             int
}

// newFloodTest starts a flood test of n messages with the server's conf.
func newFloodTest(t *testing.T, conf *actor.Conf, n int) *floodTest {
	t.Helper()
	server, tr := serverWithTransport(t, conf)
	ft := &floodTest{tr: tr, sink: &orderedSink{gate: make(chan struct{}), got: make(chan uint64, n)}, n: n}
	register(t, server, "flooded", ft.sink)
	register(t, server, "echo", newEcho())
	t.Cleanup(func() {
		if !ft.opened {
			close(ft.sink.gate)
		}
	})
	client := newClientEnv(t, "flooder", nil)
	ft.flooded = lookup(t, client, server.Address(), "flooded")
	ft.echo = lookup(t, client, server.Address(), "echo")
	return ft
}

// flood sends the n messages, each its sequence number in a payload of
// size bytes (at least 8).
func (ft *floodTest) flood(t *testing.T, size int) {
	t.Helper()
	for i := range ft.n {
		payload := binary.BigEndian.AppendUint64(make([]byte, 0, size), uint64(i))
		if err := ft.flooded.Send(wrapperspb.Bytes(payload[:size])); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
}

// openAndCheckOrder lets the flooded endpoint go on and checks that it gets
// the whole flood, in order.
func (ft *floodTest) openAndCheckOrder(t *testing.T) {
	t.Helper()
	close(ft.sink.gate)
	ft.opened = true
	for i := range uint64(ft.n) {
		select {
		case got := <-ft.sink.got:
			if got != i {
				t.Fatalf("message %d arrived as number %d", got, i)
			}
		case <-time.After(waitFor):
			t.Fatalf("only %d of %d messages arrived", i, ft.n)
		}
	}
}

// A flood to an endpoint that does not keep up does not hold up what goes
// to another endpoint over the same connection: the sender keeps the flood
// within the endpoint's credit, so the connection stays readable and an
// ask to an idle endpoint is answered while the flooded one is blocked.
// Once it catches up, it gets the whole flood, in order.
func TestFloodToOneEndpointDoesNotBlockAsksToAnother(t *testing.T) {
	ft := newFloodTest(t, actor.NewConf().Set(netty.KeyMaxInFlightMessages, "64"), 2000)
	ft.flood(t, 8)
	// The flood is 30 times the connection's bound of 64 messages; the
	// ask goes behind it.
	for i := range 3 {
		if got := askString(t, ft.echo, "ping"); got != "ping" {
			t.Fatalf("ask %d: %q", i, got)
		}
	}
	ft.openAndCheckOrder(t)
}

// A flood of small frames is charged more than its bytes against the byte
// credit: with 256 KiB of credit per endpoint, 1 KiB frames to an endpoint
// that processes nothing get 11 frames, not 256, to the receiver, so an ask
// to another endpoint waits behind 11 KiB, not 256 KiB. The rest waits at
// the sender and arrives, in order, once the endpoint goes on.
func TestSmallFramesAreChargedWhatTheyHoldUp(t *testing.T) {
	// Credit: 256 KiB an endpoint.
	ft := newFloodTest(t, actor.NewConf().Set(netty.KeyMaxInFlightBytes, "1m"), 200)
	received := func() uint64 {
		var sum uint64
		for _, ps := range ft.tr.PeerStats() {
			sum += ps.ReceivedBytes
		}
		return sum
	}
	before := received()
	ft.flood(t, 1024)
	// The ask's reply comes after everything sent before it was read.
	if got := askString(t, ft.echo, "ping"); got != "ping" {
		t.Fatalf("ask: %q", got)
	}
	if got := received() - before; got > 16<<10 {
		t.Fatalf("the receiver read %d bytes of a flood of 1 KiB frames to an endpoint with 256 KiB of credit; want 11 frames' worth", got)
	}
	ft.openAndCheckOrder(t)
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
