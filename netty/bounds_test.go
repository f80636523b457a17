package netty_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type syncBuffer = testutil.SyncBuffer

// clientRef is the server's reference to endpoint name of the client-mode
// peer id.
func clientRef(t *testing.T, server *actor.Env, id, name string) *actor.Ref {
	t.Helper()
	ref, err := server.RefFromProto(&messages.EndpointRef{Address: id, Name: name, Client: true})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// A peer that stops reading cannot make the sender queue without bound:
// past spark.rpc.io.maxQueuedBytesPerConnection, Send and Ask fail at once
// with a *QueueFullError naming the key, and the heap stays within the
// bound plus a small margin.
func TestQueuedBytesToASilentPeerAreBounded(t *testing.T) {
	const bound = 4 << 20
	conf := actor.NewConf().Set(netty.KeyMaxQueuedBytes, "4m")
	server, _ := serverWithTransport(t, conf)
	register(t, server, "echo", newEcho())
	rawClient(t, server, "client-silent") // never reads
	ref := clientRef(t, server, rawID("client-silent"), "sink")
	big := wrapperspb.Bytes(make([]byte, 1<<20))
	before := testutil.LiveHeap()
	var qerr *netty.QueueFullError
	sent := 0
	for range 256 {
		err := ref.Send(big)
		if err == nil {
			sent++
			continue
		}
		if !errors.As(err, &qerr) {
			t.Fatalf("Send: %v", err)
		}
		break
	}
	if qerr == nil {
		t.Fatalf("256 sends of 1 MiB to a silent peer all queued")
	}
	if growth := testutil.LiveHeap() - before; growth > bound+8<<20 {
		t.Errorf("heap grew by %d MiB for a bound of %d MiB", growth>>20, bound>>20)
	}
	if !errors.Is(qerr, netty.ErrQueueFull) || qerr.Limit != bound || qerr.Queued <= 0 ||
		!strings.Contains(qerr.Error(), netty.KeyMaxQueuedBytes) {
		t.Errorf("err = %v (%+v)", qerr, *qerr)
	}
	// An ask fails at once too (the socket may still take a little more,
	// so ask until the queue is full again).
	var askErr error
	for range 256 {
		f := ref.AskWithTimeout(testutil.Context(t, waitFor), big, actor.RpcTimeout{Duration: time.Minute, Key: "test.askTimeout"})
		select {
		case <-f.Done():
			_, askErr = f.Result()
		default:
			continue
		}
		break
	}
	if !errors.Is(askErr, netty.ErrQueueFull) {
		t.Errorf("Ask: %v", askErr)
	}
	// The rest of the env is unaffected.
	stillServes(t, server)
}

// The frames still queued when a connection closes are reported like the
// ones of a failed connect: counted in Dropped and logged, rate-limited.
func TestQueuedFramesLostWithAConnectionAreCounted(t *testing.T) {
	logs := &syncBuffer{}
	log := zerolog.New(logs).Level(zerolog.WarnLevel)
	tr := netty.NewTransport(netty.WithLogger(log))
	server, err := actor.NewEnv("server", nil, actor.WithTransport(tr), actor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, server) })
	c, _ := rawClient(t, server, "client-gone") // never reads
	ref := clientRef(t, server, rawID("client-gone"), "sink")
	const n = 500
	msg := wrapperspb.Bytes(make([]byte, 64<<10))
	for i := range n {
		if err := ref.Send(msg); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	c.Close()
	// The socket buffers may hold a few MiB of the 32 MiB: those left this
	// side; the rest must be counted.
	testutil.Eventually(t, waitFor, "half the queued messages counted as dropped", func() bool { return server.Dropped() >= n/2 })
	// One line for the outbox, one for the batch the writer was writing.
	testutil.Eventually(t, waitFor, "a log line for the lost frames", func() bool { return strings.Count(logs.String(), "dropping queued messages") >= 1 })
	if k := strings.Count(logs.String(), "dropping queued messages"); k > 2 {
		t.Errorf("%d lines about the lost frames", k)
	}
	if k := strings.Count(logs.String(), "message could not be delivered"); k < 1 || k > 2 {
		t.Errorf("%d lines for %d drops, want them rate-limited", k, server.Dropped())
	}
}

// slowSink blocks on its first message until opened, then checks that the
// messages come in order and tells when all of them have.
type slowSink struct {
	gate     chan struct{}
	openOnce sync.Once
	block    sync.Once
	done     chan struct{}
	total    int

	mu   sync.Mutex
	next uint64
	bad  string
}

func (s *slowSink) open() { s.openOnce.Do(func() { close(s.gate) }) }

func (s *slowSink) Receive(_ *actor.Context, msg proto.Message) error {
	s.block.Do(func() { <-s.gate })
	seq := binary.BigEndian.Uint64(msg.(*wrapperspb.BytesValue).GetValue())
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq != s.next && s.bad == "" {
		s.bad = fmt.Sprintf("message %d after %d", seq, s.next-1)
	}
	s.next = seq + 1
	if seq == uint64(s.total-1) {
		close(s.done)
	}
	return nil
}

// A fast sender to a slow endpoint cannot move its backlog into the
// receiver's memory: past spark.rpc.io.maxInFlightMessagesPerConnection
// the receiver stops reading the connection and TCP pushes back on the
// sender. Nothing is lost: once the endpoint catches up every message is
// processed, in order.
func TestSlowEndpointBoundsWhatAConnectionDelivers(t *testing.T) {
	const n, size = 20000, 1 << 10
	conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "256")
	server, _ := serverWithTransport(t, conf)
	sink := &slowSink{gate: make(chan struct{}), done: make(chan struct{}), total: n}
	register(t, server, "slow", sink)
	t.Cleanup(sink.open) // before the server's shutdown
	c, _ := rawClient(t, server, "client-fast")
	c.SetDeadline(time.Now().Add(3 * waitFor)) //nolint:errcheck
	var buf []byte
	payload := make([]byte, size)
	for i := range n {
		binary.BigEndian.PutUint64(payload, uint64(i))
		p, _ := proto.Marshal(wrapperspb.Bytes(payload))
		env, _ := proto.Marshal(&messages.WireEnvelope{Target: "slow", Type: "google.protobuf.BytesValue", Payload: p})
		buf = append(binary.BigEndian.AppendUint32(buf, uint32(len(env))), env...) //nolint:gosec // small
	}
	before := testutil.LiveHeap()
	written := make(chan error, 1)
	go func() {
		_, err := c.Write(buf)
		written <- err
	}()
	// Not a synchronisation: the window in which an unbounded receiver
	// would take the whole backlog.
	select {
	case err := <-written:
		t.Errorf("the receiver took all %d MiB while its endpoint was blocked (write: %v)", len(buf)>>20, err)
		written <- err
	case <-time.After(time.Second):
	}
	if growth := testutil.LiveHeap() - before; growth > 8<<20 {
		t.Errorf("receiver heap grew by %d MiB with its endpoint blocked", growth>>20)
	}
	runtime.KeepAlive(buf) // measured with the sender's bytes
	sink.open()
	select {
	case <-sink.done:
	case <-time.After(3 * waitFor):
		t.Fatal("not every message was processed")
	}
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("write: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("the sender's write did not complete")
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.bad != "" {
		t.Fatal(sink.bad)
	}
}

// gated blocks every message until opened and tells when the first arrived.
type gated struct {
	first chan struct{}
	once  sync.Once
	gate  chan struct{}
}

func (g *gated) Receive(*actor.Context, proto.Message) error {
	g.once.Do(func() { close(g.first) })
	<-g.gate
	return nil
}

// A connection that waits for a blocked endpoint to catch up still closes
// when the transport shuts down: a stuck handler keeps no socket open.
func TestTransportShutdownEndsAReaderWaitingForCredit(t *testing.T) {
	conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "4")
	server, tr := serverWithTransport(t, conf)
	g := &gated{first: make(chan struct{}), gate: make(chan struct{})}
	register(t, server, "blocked", g)
	t.Cleanup(func() { close(g.gate) })
	c, _ := rawClient(t, server, "client-waiting")
	payload, _ := proto.Marshal(wrapperspb.String("x"))
	for range 100 {
		writeMsg(t, c, &messages.WireEnvelope{Target: "blocked", Type: "google.protobuf.StringValue", Payload: payload})
	}
	select {
	case <-g.first:
	case <-time.After(waitFor):
		t.Fatal("nothing delivered")
	}
	if err := tr.Shutdown(testutil.Context(t, waitFor)); err != nil {
		t.Fatalf("transport shutdown with a reader waiting for credit: %v", err)
	}
	expectClosed(t, c)
}
