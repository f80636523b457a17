package netty_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The allocation contracts of the remote path, per message in the steady
// state, counted over the whole process (sender, writer, reader and
// receiving endpoint). The race detector allocates differently, so the
// bounds are checked without it.

// batchCounter signals on arrived once every batch messages.
type batchCounter struct {
	n, batch int
	arrived  chan struct{}
}

func (c *batchCounter) Receive(*actor.Context, proto.Message) error {
	if c.n++; c.n%c.batch == 0 {
		c.arrived <- struct{}{}
	}
	return nil
}

// A 16-byte remote send of a flat vtprotobuf message costs at most 1.5
// allocations per message: the message the receiving endpoint owns, and
// the byte slab its bytes are decoded into, one for many messages
// (slab.go), and at times a mailbox's turn, when the endpoint went idle.
// The sender and the writer allocate nothing (pooled chunks, a kept iov).
// Before the slab, the message's bytes were an allocation of their own: 2.
func TestRemoteSendAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	const batch = 200
	sendBatch := batchSender(t, &messages.BenchPing{Sender: 1, Seq: 2, Payload: make([]byte, 16)}, batch)
	sendBatch() // warm up: connection, caches, pools
	perMsg := testing.AllocsPerRun(20, sendBatch) / batch
	t.Logf("%.2f allocations per 16-byte remote send", perMsg)
	if perMsg > 1.5 {
		t.Fatalf("%.2f allocations per 16-byte remote send, want at most 1.5", perMsg)
	}
}

// A message without vtprotobuf's methods is decoded by protobuf-go into a
// message and its bytes: at most 3 allocations, with a mailbox's turn.
func TestRemoteSendAllocationsWithoutVT(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	const batch = 200
	sendBatch := batchSender(t, wrapperspb.Bytes(make([]byte, 16)), batch)
	sendBatch() // warm up: connection, caches, pools
	perMsg := testing.AllocsPerRun(20, sendBatch) / batch
	t.Logf("%.2f allocations per 16-byte remote send", perMsg)
	if perMsg > 3 {
		t.Fatalf("%.2f allocations per 16-byte remote send, want at most 3", perMsg)
	}
}

// A 64 KiB remote send allocates the receiver's copy of the message and
// little else: the sender encodes it into a pooled chunk. Before the chunks
// of frames over 64 KiB were pooled, each took a new buffer of its size, so
// the process allocated twice the payload per message. As at 16 bytes, it
// costs at most 3 allocations: decoded on the endpoint's loop (deferred.go),
// it takes none of its own beyond the message and its bytes.
func TestRemoteSendOf64KiBAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	const payload, batch = 64 << 10, 50
	sendBatch := batchSender(t, &messages.BenchPing{Payload: make([]byte, payload)}, batch)
	for range 3 {
		sendBatch() // warm up: connection, read buffer, pools
	}
	var before, after runtime.MemStats
	const batches = 20
	runtime.ReadMemStats(&before)
	for range batches {
		sendBatch()
	}
	runtime.ReadMemStats(&after)
	perMsg := float64(after.TotalAlloc-before.TotalAlloc) / (batches * batch)
	allocs := float64(after.Mallocs-before.Mallocs) / (batches * batch)
	t.Logf("%.0f bytes and %.2f allocations per 64 KiB remote send", perMsg, allocs)
	if perMsg > 1.5*payload {
		t.Fatalf("%.0f bytes allocated per 64 KiB remote send, want at most %d (1.5 times the payload)", perMsg, payload*3/2)
	}
	if allocs > 3 {
		t.Fatalf("%.2f allocations per 64 KiB remote send, want at most 3", allocs)
	}
}

// batchSender registers a batchCounter on a server env and returns a
// function that sends it batch copies of msg from a client env and waits
// until they arrived.
func batchSender(t *testing.T, msg proto.Message, batch int) func() {
	server, client := newEnv(t, "server", nil), newEnv(t, "client", nil)
	c := &batchCounter{batch: batch, arrived: make(chan struct{}, 1)}
	register(t, server, "sink", c)
	ref := lookup(t, client, server.Address(), "sink")
	return func() {
		for range batch {
			if err := ref.Send(msg); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-c.arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("the batch did not arrive within 10 s")
		}
	}
}

// A remote ask with 1 in flight costs at most 8.5 allocations: the request
// (decoded on the server) and the reply (decoded on the asker) are 4 of
// them; the future (its id string is kept in it) and its channel; the
// asker's PID on the server (its id kept in it); the queued ask, which
// carries the sender and the handler's call context in one allocation; and
// at most 0.5 more on average for a mailbox's turn.
func TestRemoteAskAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("the race detector allocates differently")
	}
	for _, tc := range []struct {
		name  string
		ep    actor.Endpoint
		ask   func(context.Context, *actor.Ref, proto.Message) error // asks for the reply's type
		limit float64
	}{
		// The request and its reply, decoded, the future and its
		// channel, the asker's PID and the queued ask.
		{"reply of the request's type", newEcho(), func(ctx context.Context, ref *actor.Ref, m proto.Message) error {
			_, err := actor.AskAs[*wrapperspb.BytesValue](ctx, ref, m)
			return err
		}, 8.5},
		// Sends that alternate two types (the request's, the reply's)
		// allocate nothing more: 10 allocations before the codec kept
		// its last type without allocating.
		{"reply of another type", lengthReplier{}, func(ctx context.Context, ref *actor.Ref, m proto.Message) error {
			_, err := actor.AskAs[*wrapperspb.Int64Value](ctx, ref, m)
			return err
		}, 8.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, client := newEnv(t, "server", nil), newEnv(t, "client", nil)
			register(t, server, "echo", tc.ep)
			ref := lookup(t, client, server.Address(), "echo")
			msg := wrapperspb.Bytes(make([]byte, 16))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ask := func() {
				if err := tc.ask(ctx, ref, msg); err != nil {
					t.Fatal(err)
				}
			}
			ask()
			const asks = 200
			n := testing.AllocsPerRun(5, func() {
				for range asks {
					ask()
				}
			}) / asks
			t.Logf("%.2f allocations per remote ask", n)
			if n > tc.limit {
				t.Fatalf("%.2f allocations per remote ask, want at most %.1f", n, tc.limit)
			}
		})
	}
}

// lengthReplier answers a BytesValue with its length, an Int64Value.
type lengthReplier struct{}

func (lengthReplier) Receive(*actor.Context, proto.Message) error { return nil }

func (lengthReplier) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(wrapperspb.Int64(int64(len(msg.(*wrapperspb.BytesValue).GetValue()))))
	return nil
}
