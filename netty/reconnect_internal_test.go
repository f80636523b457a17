package netty

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const reconnectWait = 10 * time.Second

// testServer starts a listening env on tr that is shut down when the test
// ends.
func testServer(t *testing.T, tr *Transport) *actor.Env {
	t.Helper()
	env, err := actor.NewEnv("server", nil, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), reconnectWait)
		defer cancel()
		if err := env.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return env
}

// dialAs connects to addr as the client-mode peer id, with this package's
// own dialer handshake.
// dialAs connects to addr as the client-mode peer named name (its identity
// is testClient(name).identity).
func dialAs(t *testing.T, addr, name string) (net.Conn, *frameReader) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(reconnectWait)) //nolint:errcheck
	fr := newFrameReader(nc, readBufferSize)
	if _, err := dialHandshake(fr, nc, testClient(name)); err != nil {
		t.Fatalf("handshake as %s: %v", name, err)
	}
	fr.max = 1 << 20
	return nc, fr
}

// frames encodes one-way messages to target.
func frames(t *testing.T, target string, msgs ...proto.Message) []byte {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		var err error
		if b, _, err = appendEnvelope(b, target, "", "", m, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// sequence records the numbers it is sent and flags one that is not larger
// than the previous one of its round (numbers are round*1e6 + i).
type sequence struct {
	mu       sync.Mutex
	last     map[int64]int64
	got      map[int64]int64 // the largest number of each round
	count    map[int64]int
	disorder []string
}

func (s *sequence) Receive(_ *actor.Context, msg proto.Message) error {
	v := msg.(*wrapperspb.Int64Value).GetValue()
	round := v / 1e6
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.last[round]; ok && v <= prev {
		s.disorder = append(s.disorder, fmt.Sprintf("round %d: %d after %d", round, v%1e6, prev%1e6))
	}
	s.last[round] = v
	s.got[round] = max(s.got[round], v)
	s.count[round]++
	return nil
}

func (s *sequence) received(round int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[round]
}

func (s *sequence) has(v int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[v/1e6] == v
}

// A connection that replaces another from the same peer delivers nothing
// before the old connection's reader has stopped: a peer's messages keep
// their order across a reconnect.
func TestReplacementKeepsPerSenderOrder(t *testing.T) {
	tr := NewTransport(WithLogger(zerolog.Nop()))
	server := testServer(t, tr)
	seq := &sequence{last: map[int64]int64{}, got: map[int64]int64{}, count: map[int64]int{}}
	if _, err := server.RegisterEndpoint("order", seq); err != nil {
		t.Fatal(err)
	}
	// The old connection is replaced while it streams, so that its reader
	// has a full buffer left to deliver when the new connection starts.
	const rounds, n = 20, 15000
	for round := range int64(rounds) {
		name := fmt.Sprintf("client-order-%d", round)
		msgs := make([]proto.Message, n+1000)
		for i := range msgs {
			msgs[i] = wrapperspb.Int64(round*1e6 + int64(i))
		}
		old, _ := dialAs(t, server.Address().HostPort(), name)
		streamed := make(chan struct{})
		go func() {
			defer close(streamed)
			old.Write(frames(t, "order", msgs[:n]...)) //nolint:errcheck // cut short by the replacement
		}()
		testutil.Eventually(t, reconnectWait, "the old connection's first messages", func() bool { return seq.received(round) >= 1000 })
		cur, _ := dialAs(t, server.Address().HostPort(), name) // replaces old
		if _, err := cur.Write(frames(t, "order", msgs[n:]...)); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, reconnectWait, "the new connection's messages", func() bool { return seq.has(round*1e6 + int64(len(msgs)) - 1) })
		old.Close()
		<-streamed
	}
	seq.mu.Lock()
	defer seq.mu.Unlock()
	if len(seq.disorder) > 0 {
		t.Fatalf("%d messages out of order across a reconnect, first: %v", len(seq.disorder), seq.disorder[:min(5, len(seq.disorder))])
	}
}

// A reconnect that races the close of the connection it replaces leaves
// the new connection on a peer that Send finds: replies and sends to a
// client-mode peer keep working. The hook closes the old connection at the
// point where attach once released the peer's lock.
func TestReconnectRacingCloseLeavesNoZombie(t *testing.T) {
	const name = "client-zombie"
	id := testClient(name).identity
	var armed atomic.Bool
	var closers sync.WaitGroup
	tr := NewTransport(WithLogger(zerolog.Nop()))
	tr.hooks.attach = func(p *peer) {
		if p.identity != id || !armed.CompareAndSwap(true, false) || p.conn == nil {
			return
		}
		old := p.conn
		if p.mu.TryLock() {
			// attach does not hold the lock here: close in the gap.
			p.mu.Unlock()
			old.close(nil)
			return
		}
		closers.Add(1)
		go func() {
			defer closers.Done()
			old.close(nil)
		}()
	}
	server := testServer(t, tr)
	t.Cleanup(closers.Wait)
	dialAs(t, server.Address().HostPort(), name)
	armed.Store(true)
	_, fr := dialAs(t, server.Address().HostPort(), name)
	if armed.Load() {
		t.Fatal("the hook did not run")
	}
	target := &protoactor.PID{Address: id, Id: "sink"}
	if err := tr.Send(target, nil, wrapperspb.String("still reachable")); err != nil {
		t.Fatalf("Send to the reconnected peer: %v", err)
	}
	b, err := fr.next()
	if err != nil {
		t.Fatalf("reading from the new connection: %v", err)
	}
	e, err := parseEnvelope(b)
	if err != nil || string(e.target) != "sink" {
		t.Fatalf("got %q, %v", e.target, err)
	}
	if _, ok := tr.peers.Load(id); !ok {
		t.Fatal("the reconnected peer is not in the map")
	}
}

// The acceptor attaches an inbound connection before it writes its last
// handshake frame. A Send in between must not write on the connection
// inline: its frame would reach the dialer where the handshake's reply
// belongs, and fail the handshake (and with it everything both sides had
// queued). It waits for the writer, which starts after the handshake. The
// frame is an ask, the kind of frame Send writes inline.
func TestSendDuringTheAcceptorsHandshakeWaitsForIt(t *testing.T) {
	const name = "client-early"
	id := testClient(name).identity
	tr := NewTransport(WithLogger(zerolog.Nop()))
	var sent atomic.Bool
	tr.hooks.accepted = func(c *conn) {
		if c.info.Identity != id || sent.Swap(true) {
			return
		}
		asker := &protoactor.PID{Address: tr.info.Identity, Id: "asker"}
		if err := tr.Send(&protoactor.PID{Address: id, Id: "sink"}, asker, wrapperspb.String("early")); err != nil {
			t.Errorf("Send during the handshake: %v", err)
		}
	}
	server := testServer(t, tr)
	_, fr := dialAs(t, server.Address().HostPort(), name)
	if !sent.Load() {
		t.Fatal("the hook did not run")
	}
	b, err := fr.next()
	if err != nil {
		t.Fatalf("reading the frame sent during the handshake: %v", err)
	}
	e, err := parseEnvelope(b)
	if err != nil || string(e.target) != "sink" {
		t.Fatalf("got %q, %v; want the frame to sink", e.target, err)
	}
}
