package netty

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// hostileServer starts a listening env with conf on a new transport, set
// up with set before it starts.
func hostileServer(t *testing.T, conf *actor.Conf, set func(*Transport)) (*Transport, *actor.Env) {
	t.Helper()
	tr := NewTransport(WithLogger(zerolog.Nop()))
	if set != nil {
		set(tr)
	}
	env, err := actor.NewEnv("server", conf, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), reconnectWait)
		defer cancel()
		_ = env.Shutdown(ctx)
	})
	return tr, env
}

// queuedFor returns what the transport holds for peer id: its outbox, the
// batch its writer took, and its credit queues.
func queuedFor(tr *Transport, id string) int64 {
	v, ok := tr.peers.Load(id)
	if !ok {
		return 0
	}
	p := v.(*peer)
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(p.out.size+p.writing) + p.credit.heldB
}

// floodUnread writes batch to nc, and never reads, until the write fails
// (the connection was cut off) or the server holds more than limit bytes
// for peer id, which fails the test.
func floodUnread(t *testing.T, tr *Transport, name string, batch []byte, limit int64) {
	t.Helper()
	nc, _ := dialAs(t, tr.info.Address.HostPort(), name)
	_ = nc.SetDeadline(time.Time{})
	id := testClient(name).identity
	for i := 0; i < 2000; i++ {
		if _, err := nc.Write(batch); err != nil {
			return // cut off
		}
		if q := queuedFor(tr, id); q > limit {
			t.Fatalf("the server holds %d bytes for a peer that reads nothing, past %d", q, limit)
		}
	}
	t.Fatal("the peer was never cut off")
}

// A peer that repeats its credit offer is cut off. Before, each offer was
// answered with an accept and an offer, outside
// spark.rpc.io.maxQueuedBytesPerConnection: a peer that read nothing made
// the server hold 34 MB against a bound of 1 MB in under two seconds.
func TestRepeatedCreditOffersAreCutOff(t *testing.T) {
	tr, _ := hostileServer(t, actor.NewConf().Set(KeyMaxQueuedBytes, "1m"), nil)
	offer := appendControl(nil, creditOffer, creditPayload(nil, 1, 1, ""))
	var batch []byte
	for range 4096 {
		batch = append(batch, offer...)
	}
	floodUnread(t, tr, "offer-flooder", batch, 4<<20)
}

// A peer that reads nothing and sends to targets that do not exist, each
// of whose frames is granted back at once, is cut off once the grants
// waiting for it pass maxControlQueued. Before, the grants, outside the
// outbox's bound, grew until the write timeout.
func TestPeerThatReadsNoGrantsIsCutOff(t *testing.T) {
	tr, _ := hostileServer(t, actor.NewConf().Set(KeyMaxQueuedBytes, "1m"), nil)
	batch := appendControl(nil, creditOffer, creditPayload(nil, 1000, 1<<30, ""))
	batch = appendControl(batch, creditAccept, nil)
	payload, _ := proto.Marshal(wrapperspb.String("x"))
	for i := range 4096 {
		target := fmt.Sprintf("nobody-%0200d", i)
		batch = appendRawFrame(batch, target, "google.protobuf.StringValue", payload)
	}
	floodUnread(t, tr, "grant-hoarder", batch, 4*maxControlQueued)
}

// appendRawFrame appends a one-way frame of type typ with payload to target.
func appendRawFrame(dst []byte, target, typ string, payload []byte) []byte {
	b, _ := proto.Marshal(&messages.WireEnvelope{Target: target, Type: typ, Payload: payload})
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b))) //nolint:gosec // small
	return append(dst, b...)
}

// sink takes every message and does nothing with it.
type sink struct{}

func (sink) Receive(*actor.Context, proto.Message) error { return nil }

// A control frame queued for a connection that a new one replaces is not
// written on the new one. Before, a grant for what the old connection had
// delivered was the new connection's first frame: to the peer, credit
// given back for messages it never sent on it, which breaks the protocol.
func TestControlFramesOfAReplacedConnectionStayWithIt(t *testing.T) {
	// Credit: 4 messages an endpoint, granted back after every message.
	tr, env := hostileServer(t, actor.NewConf().Set(KeyMaxInFlightMessages, "16"), nil)
	if _, err := env.RegisterEndpoint("sink", sink{}); err != nil {
		t.Fatal(err)
	}
	const name = "client-stale-grant"
	addr := env.Address().HostPort()
	old, oldFr := dialAs(t, addr, name)
	if _, err := old.Write(appendControl(nil, creditOffer, creditPayload(nil, 1000, 1<<30, ""))); err != nil {
		t.Fatal(err)
	}
	for {
		b, err := oldFr.next()
		if err != nil {
			t.Fatalf("waiting for the server's offer: %v", err)
		}
		if e, err := parseEnvelope(b); err == nil && isCreditFrame(e.target) && string(e.typ) == creditOffer {
			break // after the server's accept
		}
	}
	v, _ := tr.peers.Load(testClient(name).identity)
	p := v.(*peer)
	// Keep the old connection's writer off the socket, as a write in
	// progress does, once its writes so far have ended.
	testutil.Eventually(t, reconnectWait, "the server's writes to end", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.conn.busy || p.writing > 0 || !p.out.empty() {
			return false
		}
		p.conn.busy = true
		return true
	})
	// The message's grant waits in the outbox.
	if _, err := old.Write(frames(t, "sink", wrapperspb.String("a"))); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, reconnectWait, "the grant to be queued", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.out.frames > 0
	})
	// The client connects again; its new connection replaces the old one,
	// and the server's first frame on it answers the client's offer.
	cur, curFr := dialAs(t, addr, name)
	if _, err := cur.Write(appendControl(nil, creditOffer, creditPayload(nil, 1000, 1<<30, ""))); err != nil {
		t.Fatal(err)
	}
	_ = cur.SetReadDeadline(time.Now().Add(reconnectWait))
	b, err := curFr.next()
	if err != nil {
		t.Fatalf("the new connection's first frame: %v", err)
	}
	e, err := parseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(e.typ) == creditGrant {
		n, size, id, _ := parseCreditValues(e.payload)
		t.Fatalf("the new connection's first frame is a grant (%d messages, %d bytes, target %q) of the old connection's", n, size, id)
	}
}
