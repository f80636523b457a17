package netty_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A Send that writes its frame itself, on a quiet connection, hands what
// the socket does not take to the writer: to a receiver that has stopped
// reading, every message still arrives once it reads again, each once and
// in order. (With no quiet time required, every lone frame is written so,
// and the socket fills during one of those writes.)
func TestInlineWritesToAFullSocketLoseNothing(t *testing.T) {
	const n, size = 48, 256 << 10
	server, _ := serverWithTransport(t, actor.NewConf().Set(netty.KeyMaxInFlightMessages, "2"))
	sink := &slowSink{gate: make(chan struct{}), done: make(chan struct{}), total: n}
	register(t, server, "slow", sink)
	t.Cleanup(sink.open) // before the server's shutdown
	client := newEnv(t, "client", actor.NewConf(), netty.WithInlineQuiet(0))
	ref := lookup(t, client, server.Address(), "slow")
	for i := range n {
		payload := make([]byte, size)
		binary.BigEndian.PutUint64(payload, uint64(i))
		if err := ref.Send(wrapperspb.Bytes(payload)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	sink.open()
	select {
	case <-sink.done:
	case <-time.After(waitFor):
		t.Fatal("not every message was processed")
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.bad != "" {
		t.Fatal(sink.bad)
	}
}
