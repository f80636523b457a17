package netty_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// countingGate counts the messages it gets, processing none until its gate
// opens.
type countingGate struct {
	gate chan struct{}
	n    atomic.Int64
}

func (g *countingGate) Receive(*actor.Context, proto.Message) error {
	<-g.gate
	g.n.Add(1)
	return nil
}

// A peer that names enough other targets does not get its credit to an
// endpoint back: the connection's target cache keeps the targets that hold
// messages in flight. Before, the cache was emptied at 4096 targets, with
// the counts credit is enforced with, and the peer put twice its credit
// into a blocked endpoint with its connection open.
func TestCreditHoldsAfterTheTargetCacheFills(t *testing.T) {
	conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "64") // credit: 16 messages an endpoint
	server, _ := serverWithTransport(t, conf)
	g := &countingGate{gate: make(chan struct{})}
	register(t, server, "blocked", g)
	register(t, server, "echo", newEcho())
	t.Cleanup(func() { close(g.gate) })
	c, r := rawClient(t, server, "client-cache-flusher")
	writeMsg(t, c, &messages.WireEnvelope{Target: "credit$", Type: "sparkrpc.credit.Accept"})
	payload, _ := proto.Marshal(wrapperspb.String("x"))
	frameTo := func(target, sender string) []byte {
		b, _ := proto.Marshal(&messages.WireEnvelope{Target: target, SenderId: sender, Type: "google.protobuf.StringValue", Payload: payload})
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) //nolint:gosec // small
	}
	var out []byte
	for range 16 { // the whole credit of "blocked"
		out = append(out, frameTo("blocked", "")...)
	}
	for i := range 4096 { // one frame each to names that run nothing
		out = append(out, frameTo(fmt.Sprintf("nobody-%d", i), "")...)
	}
	for range 16 { // the credit of "blocked" once more
		out = append(out, frameTo("blocked", "")...)
	}
	out = append(out, frameTo("echo", "future$.cache")...) // its reply says all was read
	if _, err := c.Write(out); err != nil {
		return // cut off while writing
	}
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err == nil {
		t.Fatalf("the peer put 32 messages into an endpoint whose credit is 16 (%d processed), and its connection stayed open", g.n.Load())
	}
}
