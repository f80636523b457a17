package netty

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"io"
	"testing"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// FuzzFrameDecoder feeds arbitrary bytes to the frame reader and the
// envelope parser: they must return errors, never panic or allocate more
// than the limit.
func FuzzFrameDecoder(f *testing.F) {
	good, _, _ := appendEnvelope(nil, "echo", "127.0.0.1:1", "future$1", wrapperspb.String("hi"), 1<<20)
	f.Add(good)
	f.Add(append(binary.BigEndian.AppendUint32(nil, 5), fieldRef<<3, 1, 0x2a, 1, 0x08)) // a reference
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 3, 0xff, 0xff, 0xff})
	f.Add(append(binary.BigEndian.AppendUint32(nil, 100), 1, 2, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := newFrameReader(bytes.NewReader(data), 4096)
		fr.max = 1 << 16
		for {
			b, err := fr.next()
			if err != nil {
				return
			}
			if len(b) > fr.max {
				t.Fatalf("frame of %d bytes over the limit", len(b))
			}
			e, err := parseEnvelope(b)
			checkEnvelopeAgrees(t, b, e, err)
		}
	})
}

// rw is a connection whose peer sent data and whose answers are discarded.
type rw struct {
	io.Reader
	out bytes.Buffer
}

func (c *rw) Write(b []byte) (int, error) { return c.out.Write(b) }

// FuzzHandshake feeds arbitrary bytes, as the dialer, to the acceptor's
// handshake, with and without authentication: it must fail cleanly, and
// never accept a dialer that did not prove the secret.
func FuzzHandshake(f *testing.F) {
	hello, _ := appendFrame(nil, &messages.Handshake{Version: ProtocolVersion, Identity: "127.0.0.1:7077"})
	f.Add(hello)
	client := testClient("client-1")
	hello2, _ := appendFrame(nil, &messages.Handshake{Version: ProtocolVersion, Identity: client.identity, ClientMode: true,
		PublicKey: client.clientKey.Public().(ed25519.PublicKey), Nonce: make([]byte, nonceLen)})
	proofFrame, _ := appendFrame(nil, &messages.HandshakeProof{Proof: make([]byte, 32)})
	f.Add(append(hello2, proofFrame...))
	hello3, _ := appendFrame(nil, &messages.Handshake{Version: ProtocolVersion, Identity: "127.0.0.1:7077", KeyId: "app-1", Nonce: make([]byte, nonceLen)})
	f.Add(append(hello3, proofFrame...))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, secret := range [][]byte{nil, []byte("secret")} {
			c := &rw{Reader: bytes.NewReader(data)}
			fr := newFrameReader(c, 4096)
			cfg := handshakeConfig{identity: "127.0.0.1:1", secret: secret}
			if secret != nil {
				// Scoped secrets: a dialer naming a key id is checked
				// against that key's secret.
				cfg.authKeys = func(id string) ([]byte, bool) { return []byte("key-" + id), id == "app-1" }
			}
			res, err := acceptHandshake(fr, c, cfg, func(handshakeResult) error { return nil })
			if err == nil && secret != nil {
				t.Fatalf("accepted %+v without the secret", res)
			}
			if err == nil && res.clientMode {
				t.Fatalf("accepted client %+v without its key's signature", res)
			}
			if err == nil && res.identity == "" {
				t.Fatal("accepted an empty identity")
			}
		}
		// And as the acceptor's answer to a dialer.
		c := &rw{Reader: bytes.NewReader(data)}
		dialer := client
		dialer.secret = []byte("s")
		_, _ = dialHandshake(newFrameReader(c, 4096), c, dialer)
	})
}

// FuzzAddressParser checks that the Spark URL parsers never panic and that
// what they accept prints back to something they accept again.
func FuzzAddressParser(f *testing.F) {
	for _, s := range []string{
		"spark://test@localhost:12345", "spark://1.2. 3.4:1234", "spark://[::1]:7077",
		"spark://name@[2600::]:1", "spark-client://test", "localhost:1", "::1", "spark://host:-1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a, err := actor.ParseEndpointAddress(s); err == nil {
			b, err := actor.ParseEndpointAddress(a.String())
			if err != nil || b != a {
				t.Fatalf("%q -> %v -> %v, %v", s, a, b, err)
			}
		}
		if a, err := actor.ParseSparkURL(s); err == nil {
			if b, err := actor.ParseSparkURL(a.SparkURL()); err != nil || b != a {
				t.Fatalf("%q -> %v -> %v, %v", s, a, b, err)
			}
		}
		if a, err := actor.ParseHostPort(s); err == nil {
			if b, err := actor.ParseHostPort(a.HostPort()); err != nil || b != a {
				t.Fatalf("%q -> %v -> %v, %v", s, a, b, err)
			}
		}
	})
}

// fuzzHost is the TransportHost of FuzzReaderRouting: an endpoint "any"
// that takes every type, one "strict" that takes StringValue only, no
// other name; an ask "future$.mine" pending on the connection's peer that
// takes StringValue, and one "future$.theirs" pending on another peer.
type fuzzHost struct {
	actor.TransportHost
	t         *testing.T
	inboxes   map[string]actor.Inbox
	completed []string // the asks completed, by id
}

func (h *fuzzHost) Inbox(id string) actor.Inbox { return h.inboxes[id] }

func (h *fuzzHost) NoEndpoint(target, _ *protoactor.PID, _ protoreflect.FullName) bool {
	if h.inboxes[target.Id] != nil {
		h.t.Fatalf("NoEndpoint for %s, which runs", target.Id)
	}
	return true
}

func (h *fuzzHost) Deliver(target *protoactor.PID, in actor.Inbound) {
	h.t.Fatalf("Deliver of a %T to %s, which runs no endpoint", in.Msg, target.Id)
}

func (h *fuzzHost) Undeliverable(*protoactor.PID, *protoactor.PID, proto.Message, error) {}

func (h *fuzzHost) AfterProcessed(_ *protoactor.PID, fn func()) { fn() }

func (h *fuzzHost) LookupReply(from string, id []byte) (actor.PendingReply, actor.ReplyStatus) {
	switch string(id) {
	case "future$.theirs":
		return actor.PendingReply{}, actor.ReplyWrongPeer
	case "future$.mine":
		if from != "client-1" {
			h.t.Fatalf("reply looked up for %q, not the connection's peer", from)
		}
		id := string(id)
		return actor.PendingReplyFunc("google.protobuf.StringValue", func(msg proto.Message) {
			h.completed = append(h.completed, id)
			switch msg.(type) {
			case *wrapperspb.StringValue, *messages.RpcFailure:
			default:
				h.t.Fatalf("ask completed with a %T", msg)
			}
		}), actor.ReplyPending
	}
	return actor.PendingReply{}, actor.ReplyNotPending
}

// fuzzInbox takes what it is posted; strict ones only StringValue.
type fuzzInbox struct {
	t      *testing.T
	strict bool
}

func (in *fuzzInbox) Accepts(name protoreflect.FullName) bool {
	return !in.strict || name == "google.protobuf.StringValue"
}

func (in *fuzzInbox) Post(m actor.Inbound) bool {
	return in.PostBatch([]actor.Inbound{m})
}

func (in *fuzzInbox) PostBatch(batch []actor.Inbound) bool {
	for _, m := range batch {
		msg := m.Msg
		if m.Deferred != nil {
			var ok bool
			if msg, ok = m.Deferred.Decode(); !ok {
				continue
			}
		}
		if _, ok := msg.(*wrapperspb.StringValue); in.strict && !ok {
			in.t.Fatalf("the strict endpoint got a %T", msg)
		}
	}
	return true
}

// FuzzReaderRouting feeds arbitrary frames to a connection's reader, as
// from the peer "client-1": it never panics, never delivers to a target
// that does not run, never posts a type an endpoint does not take, never
// completes an ask that went to another peer, and completes the ask of
// its own peer only with a reply of the type it takes or a failure.
func FuzzReaderRouting(f *testing.F) {
	add := func(frames ...[]byte) { f.Add(bytes.Join(frames, nil)) }
	env := func(target, senderAddr, senderID string, msg proto.Message) []byte {
		b, _, err := appendEnvelope(nil, target, senderAddr, senderID, msg, 1<<20)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	add(env("any", "", "future$.1", wrapperspb.String("hi")))
	add(env("strict", "", "future$.1", wrapperspb.Int64(1)), env("strict", "", "", wrapperspb.String("ok")))
	add(env("future$.mine", "", "", wrapperspb.String("reply")))
	add(env("future$.theirs", "", "", wrapperspb.String("forged")))
	add(env("future$.mine", "", "", wrapperspb.Int64(2)))
	add(env("missing", "10.0.0.1:22", "future$.2", wrapperspb.String("dial me")))
	empty := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 0)
	amp := &messages.WireEnvelope{Target: "any", SenderId: "future$.3", Type: "sparkrpc.messages.AmAllocateResponse",
		Payload: bytes.Repeat(empty, 4<<10)}
	ampFrame, err := appendFrame(nil, amp)
	if err != nil {
		f.Fatal(err)
	}
	add(ampFrame)
	f.Fuzz(func(t *testing.T, data []byte) {
		host := &fuzzHost{t: t, inboxes: map[string]actor.Inbox{
			"any": &fuzzInbox{t: t}, "strict": &fuzzInbox{t: t, strict: true},
		}}
		tr := &Transport{host: host, maxSize: 1 << 20, maxInFlight: 1 << 30, maxInFlightB: 1 << 40, log: zerolog.Nop(), done: make(chan struct{})}
		tr.info.Identity = "127.0.0.1:1"
		tr.closing.Store(true) // answers are not sent: nothing is dialled
		c := &conn{t: tr, targets: map[string]*target{}, types: map[string]*messageType{}}
		c.info.Identity = "client-1"
		src := bytes.NewReader(data)
		c.fr = newFrameReader(src, 64<<10)
		c.fr.max = 1 << 20
		c.fr.establish(src)
		for {
			b, err := c.fr.next()
			if err != nil {
				break
			}
			if err := c.handle(b); err != nil {
				break
			}
		}
		c.flush()
		for _, id := range host.completed {
			if id != "future$.mine" {
				t.Fatalf("completed the ask %s", id)
			}
		}
		if n := tr.forgedReplies.Load(); n > 0 && bytes.Contains(data, []byte("future$.theirs")) == false {
			t.Fatalf("%d forged replies counted without one", n)
		}
	})
}
