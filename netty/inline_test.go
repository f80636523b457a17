package netty_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// An ask that Send writes itself, on a quiet connection, hands what the
// socket does not take to the writer: to a receiver that has stopped
// reading, every ask still arrives once it reads again, each once and in
// order, and is answered. (With no quiet time required, every lone ask is
// written so, and the socket fills during one of those writes.)
func TestInlineWritesToAFullSocketLoseNothing(t *testing.T) {
	const n, size = 48, 256 << 10
	server, _ := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxInFlightMessages, "2"))
	sink := &slowSink{gate: make(chan struct{}), done: make(chan struct{}), total: n}
	register(t, server, "slow", slowAsks{sink})
	t.Cleanup(sink.open) // before the server's shutdown
	client := newEnv(t, "client", actor.NewConf(), netty.WithInlineQuiet(0))
	ref := lookup(t, client, server.Address(), "slow")
	futures := make([]*actor.Future, n)
	for i := range n {
		payload := make([]byte, size)
		binary.BigEndian.PutUint64(payload, uint64(i))
		futures[i] = ref.Ask(t.Context(), wrapperspb.Bytes(payload))
	}
	sink.open()
	select {
	case <-sink.done:
	case <-time.After(waitFor):
		t.Fatal("not every ask was processed")
	}
	for i, f := range futures {
		if _, err := f.Result(); err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.bad != "" {
		t.Fatal(sink.bad)
	}
}

// slowAsks answers the asks that its slowSink receives.
type slowAsks struct{ *slowSink }

func (s slowAsks) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	if err := s.Receive(nil, msg); err != nil {
		return err
	}
	ctx.Reply(wrapperspb.Bool(true))
	return nil
}
