package netty_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// counting counts one-way messages and closes done at want.
type counting struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *counting) Receive(*actor.Context, proto.Message) error {
	if c.n.Add(1) == c.want {
		close(c.done)
	}
	return nil
}

// Messages queued before an env's Shutdown are written before its
// connections close: an executor's last status updates must not be lost.
func TestShutdownFlushesQueuedMessages(t *testing.T) {
	const n = 5000
	server := newEnv(t, "server", nil)
	sink := &counting{want: n, done: make(chan struct{})}
	register(t, server, "sink", sink)

	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "sink")
	for i := range n {
		if err := ref.Send(str("message")); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Shutdown(ctx); err != nil {
		t.Fatalf("client shutdown: %v", err)
	}
	select {
	case <-sink.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("got %d of %d messages sent before Shutdown", sink.n.Load(), n)
	}
}
