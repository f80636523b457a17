package netty_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
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

// A frame that the writer has taken from the outbox and is writing when
// Shutdown begins is written before the connection closes. Shutdown used to
// look only at the outbox, found it empty, and closed the connection under
// the write: the frame was lost.
func TestShutdownWaitsForTheWriteUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pn := newPipeNetwork()
		server := newEnv(t, "server", nil, netty.WithNetwork(pn))
		sink := &counting{want: 2, done: make(chan struct{})}
		register(t, server, "sink", sink)
		client := newClientEnv(t, "client", nil, netty.WithNetwork(pn))
		ref := lookup(t, client, server.Address(), "sink")
		if err := ref.Send(str("first")); err != nil {
			t.Fatalf("send: %v", err)
		}
		synctest.Wait()
		if got := sink.n.Load(); got != 1 {
			t.Fatalf("before the gate: %d messages delivered, want 1", got)
		}

		pn.armGate()
		if err := ref.Send(str("last")); err != nil {
			t.Fatalf("send: %v", err)
		}
		<-pn.held // the writer has taken the frame and is writing it
		shut := make(chan error, 1)
		go func() { shut <- client.Shutdown(context.Background()) }()
		synctest.Wait() // Shutdown waits for the write, or has closed under it
		pn.openGate()
		if err := <-shut; err != nil {
			t.Fatalf("client shutdown: %v", err)
		}
		synctest.Wait()
		if got := sink.n.Load(); got != 2 {
			t.Fatalf("%d of the 2 messages sent before Shutdown delivered: the frame being written was lost", got)
		}
	})
}

// A connection that closes while Shutdown waits for it to send the frames
// held for their endpoint's credit ends the wait: they cannot be sent any
// more. Shutdown waited out its whole flush time (2 s) instead.
func TestShutdownStopsWaitingForAClosedConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pn := newPipeNetwork()
		conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "4") // a credit of one message
		server := newEnv(t, "server", conf, netty.WithNetwork(pn))
		ep := &parked{entered: make(chan struct{}, 1), release: make(chan struct{})}
		defer close(ep.release)
		register(t, server, "parked", ep)
		client := newClientEnv(t, "client", nil, netty.WithNetwork(pn))
		ref := lookup(t, client, server.Address(), "parked")
		for i := range 10 {
			if err := ref.Send(str("held")); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		<-ep.entered
		synctest.Wait() // the rest wait for credit

		start := time.Now()
		shut := make(chan error, 1)
		go func() { shut <- client.Shutdown(context.Background()) }()
		synctest.Wait() // Shutdown waits for them
		if err := server.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-shut; err != nil {
			t.Fatalf("client shutdown: %v", err)
		}
		if waited := time.Since(start); waited > 0 {
			t.Fatalf("Shutdown waited %v for a connection that had closed", waited)
		}
	})
}
