package netty_test

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// serverWithTransport starts a server env and returns it with its transport.
func serverWithTransport(t *testing.T, conf *actor.Conf) (*actor.Env, *netty.Transport) {
	t.Helper()
	tr := netty.NewTransport(netty.WithLogger(testLogger(t)))
	env, err := actor.NewEnv("server", conf, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, env) })
	return env, tr
}

func frame(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.AppendUint32(nil, uint32(len(b))) //nolint:gosec // test sizes are small
}

func writeMsg(t testing.TB, c net.Conn, m proto.Message) {
	t.Helper()
	b, _ := proto.Marshal(m)
	if _, err := c.Write(append(frame(t, m), b...)); err != nil {
		t.Fatal(err)
	}
}

func readMsg(t testing.TB, r *bufio.Reader, m proto.Message) {
	t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		t.Fatalf("read frame: %v", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
}

// rawKey is the client key of a raw test client named name (the same for
// the same name), and the identity it derives.
func rawKey(name string) (ed25519.PrivateKey, string) {
	seed := sha256.Sum256([]byte(name))
	key := ed25519.NewKeyFromSeed(seed[:])
	return key, netty.ClientIdentity(key.Public().(ed25519.PublicKey))
}

// rawID is the identity of the raw test client named name.
func rawID(name string) string {
	_, id := rawKey(name)
	return id
}

// rawClient connects to env and completes the handshake (authentication
// off) as the client-mode peer named name: its identity is rawID(name).
func rawClient(t *testing.T, env *actor.Env, name string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, r, err := rawClientFrom(t, env, name, "")
	if err != nil {
		t.Fatalf("handshake refused: %v", err)
	}
	return c, r
}

// rawClientFrom is rawClient from the local IP from (any when empty); it
// returns the refusal instead of failing t.
func rawClientFrom(t *testing.T, env *actor.Env, name, from string) (net.Conn, *bufio.Reader, error) {
	t.Helper()
	c := dialFrom(t, env, from)
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	r := bufio.NewReader(c)
	return c, r, rawClientHandshake(t, c, r, name)
}

// dialFrom connects to env from the local IP from (any when empty); the
// connection is closed when the test ends.
func dialFrom(t testing.TB, env *actor.Env, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: waitFor}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", env.Address().HostPort())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawClientHandshake plays the client side of the handshake (authentication
// off) on c as the client-mode peer named name; it returns the refusal.
func rawClientHandshake(t *testing.T, c net.Conn, r *bufio.Reader, name string) error {
	t.Helper()
	key, id := rawKey(name)
	writeMsg(t, c, &messages.Handshake{Version: netty.ProtocolVersion, Identity: id, ClientMode: true, PublicKey: key.Public().(ed25519.PublicKey)})
	var reply messages.HandshakeReply
	readMsg(t, r, &reply)
	if reply.Error != "" {
		return errors.New(reply.Error)
	}
	sig := ed25519.Sign(key, netty.ClientTranscript(reply.Nonce, id, reply.Identity))
	writeMsg(t, c, &messages.HandshakeProof{Signature: sig})
	var res messages.HandshakeResult
	readMsg(t, r, &res)
	if res.Error != "" {
		return errors.New(res.Error)
	}
	return nil
}

func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	buf := make([]byte, 1024)
	for {
		_, err := c.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("connection not closed")
			}
			return
		}
	}
}

// stillServes checks that a well-behaved client is served.
func stillServes(t *testing.T, server *actor.Env) {
	t.Helper()
	client := newClientEnv(t, "good", nil)
	if got := askString(t, client.RemoteRef(server.Address(), "echo"), "still here"); got != "still here" {
		t.Fatalf("got %q", got)
	}
}

func TestBadInputClosesConnection(t *testing.T) {
	huge := binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF)
	cases := []struct {
		name      string
		handshake bool
		bytes     []byte
	}{
		{"garbage before handshake", false, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"4 GiB frame before handshake", false, huge},
		{"malformed handshake", false, append(binary.BigEndian.AppendUint32(nil, 5), 0xff, 0xff, 0xff, 0xff, 0xff)},
		{"garbage after handshake", true, []byte{0, 0, 0, 3, 0xff, 0xff, 0xff}},
		{"4 GiB frame after handshake", true, huge},
		{"truncated frame", true, append(binary.BigEndian.AppendUint32(nil, 100), 1, 2, 3)},
		{"envelope without target", true, append(binary.BigEndian.AppendUint32(nil, 3), 0x22, 1, 'x')},
		// Envelope references (protocol 7).
		{"undefined reference", true, append(binary.BigEndian.AppendUint32(nil, 4), 0x30, 5, 0x2a, 0)},
		{"reference 0", true, append(binary.BigEndian.AppendUint32(nil, 4), 0x30, 0, 0x2a, 0)},
		{"reference and names", true, append(binary.BigEndian.AppendUint32(nil, 8), 0x30, 1, 0x0a, 1, 'x', 0x22, 1, 'x')},
		{"definition of reference 257", true, defineFrame(t, 257, "echo", "", "google.protobuf.StringValue")},
		{"definition of a future's reference", true, defineFrame(t, 1, "future$1", "", "google.protobuf.StringValue")},
		{"definition of the control target", true, defineFrame(t, 1, "credit$", "", "google.protobuf.StringValue")},
		{"definition without a type", true, defineFrame(t, 1, "echo", "", "")},
		{"definition over 512 bytes", true, defineFrame(t, 1, "echo", "", strings.Repeat("t", 509))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server, tr := serverWithTransport(t, nil)
			register(t, server, "echo", newEcho())
			var c net.Conn
			if tc.handshake {
				c, _ = rawClient(t, server, "client-raw")
			} else {
				var err error
				if c, err = net.Dial("tcp", server.Address().HostPort()); err != nil {
					t.Fatal(err)
				}
				defer c.Close()
			}
			if _, err := c.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.name == "truncated frame" {
				c.(*net.TCPConn).CloseWrite() //nolint:errcheck
			}
			expectClosed(t, c)
			testutil.Eventually(t, waitFor, "the protocol error to be counted", func() bool { return tr.Stats().ProtocolErrors == 1 })
			stillServes(t, server)
		})
	}
}

// A frame that claims a large size (under the limit) and sends few bytes
// makes the server allocate no more than what arrived.
func TestLargeClaimDoesNotAllocate(t *testing.T) {
	server, tr := serverWithTransport(t, shortTimeoutConf())
	register(t, server, "echo", newEcho())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var conns []net.Conn
	for i := range 10 {
		c, _ := rawClient(t, server, "client-claim-"+string(rune('a'+i)))
		if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, 120<<20), 1, 2, 3)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Each reader has read its frame's header (and allocated whatever it
	// allocates for the body) once it has timed the silent peer out.
	for _, c := range conns {
		expectClosed(t, c)
	}
	testutil.Eventually(t, waitFor, "the 10 stalled frames to time out", func() bool { return tr.Stats().TimedOut == 10 })
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("allocated %d MiB for 10 frames claiming 120 MiB each", grew>>20)
	}
	stillServes(t, server)
	for _, c := range conns {
		c.Close()
	}
}

// A message whose type the receiver does not know fails the asker with an
// RpcFailure of code DECODE, and the connection keeps working.
func TestUnknownMessageTypeFailsTheAsker(t *testing.T) {
	server := newEnv(t, "server", nil)
	ep := newEcho()
	register(t, server, "echo", ep)
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "echo")
	_, err := ref.AskSync(testutil.Context(t, waitFor), unknownMessage(t))
	var re *actor.RemoteError
	if !errors.As(err, &re) || re.Code != messages.ErrorCode_ERROR_CODE_DECODE {
		t.Fatalf("err = %v", err)
	}
	if got := askString(t, ref, "after"); got != "after" {
		t.Fatalf("got %q", got)
	}
}

// The same over a raw connection: the failure comes back as an envelope.
func TestUnknownMessageTypeRaw(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	register(t, server, "echo", newEcho())
	c, r := rawClient(t, server, "client-raw")
	env := &messages.WireEnvelope{Target: "echo", SenderAddress: rawID("client-raw"), SenderId: "future$1", Type: "no.such.Type", Payload: []byte{8, 1}}
	writeMsg(t, c, env)
	var back messages.WireEnvelope
	readMsg(t, r, &back)
	var f messages.RpcFailure
	if back.Target != "future$1" || back.Type != "sparkrpc.messages.RpcFailure" {
		t.Fatalf("reply %v", &back)
	}
	if err := proto.Unmarshal(back.Payload, &f); err != nil || f.Code != messages.ErrorCode_ERROR_CODE_DECODE {
		t.Fatalf("failure %v, %v", &f, err)
	}
}

// unknownMessage builds a message of a type registered nowhere.
func unknownMessage(t testing.TB) proto.Message {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("unknown_test.proto"),
		Package: proto.String("nettytest"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Unknown"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("x"), Number: proto.Int32(1), JsonName: proto.String("x"),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(fd.Messages().Get(0))
	m.Set(fd.Messages().Get(0).Fields().Get(0), protoreflectInt(7))
	return m
}

var _ = protowire.AppendTag

func protoreflectInt(v int32) protoreflect.Value { return protoreflect.ValueOfInt32(v) }

// A ref to the name of the transport's control frames ("credit$", which no
// endpoint can have) fails at the sender: sent, it would break the protocol
// and close the connection with everything on it.
func TestAskToTheControlTargetFailsAtTheSender(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "echo", newEcho())
	client := newEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "echo")
	if got := askString(t, ref, "before"); got != "before" {
		t.Fatalf("echo answered %q", got)
	}
	ctx := testutil.Context(t, 10*time.Second)
	if _, err := client.RemoteRef(server.Address(), "credit$").AskSync(ctx, str("x")); !errors.Is(err, actor.ErrInvalidName) {
		t.Fatalf("ask to credit$: %v, want ErrInvalidName", err)
	}
	if err := client.RemoteRef(server.Address(), "credit$").Send(str("x")); !errors.Is(err, actor.ErrInvalidName) {
		t.Fatalf("send to credit$: %v, want ErrInvalidName", err)
	}
	if got := askString(t, ref, "after"); got != "after" {
		t.Fatalf("echo answered %q after the refused asks", got)
	}
}

// defineFrame is a control frame that defines reference ref as the names
// target, senderID and typ.
func defineFrame(t *testing.T, ref uint64, target, senderID, typ string) []byte {
	t.Helper()
	payload := protowire.AppendVarint(nil, ref)
	for _, s := range []string{target, senderID, typ} {
		payload = protowire.AppendString(payload, s)
	}
	env := &messages.WireEnvelope{Target: "credit$", Type: "sparkrpc.ref.Define", Payload: payload}
	b, err := proto.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return append(frame(t, env), b...)
}

// A Send that fails before anything is queued or dialled (a message over
// spark.rpc.message.maxSize, a message to the control target) leaves no
// peer behind for an address that was never connected to.
func TestFailedSendLeavesNoPeer(t *testing.T) {
	client, tr := serverWithTransport(t, actor.NewConf().Set(actor.KeyMessageMaxSize, "1"))
	tooLarge := client.RemoteRef(actor.NewRpcAddress("127.0.0.1", 1), "echo")
	if err := tooLarge.Send(str(strings.Repeat("x", 2<<20))); !errors.Is(err, actor.ErrMessageTooLarge) {
		t.Fatalf("send of a message over the limit: %v, want ErrMessageTooLarge", err)
	}
	control := client.RemoteRef(actor.NewRpcAddress("127.0.0.1", 2), "credit$")
	if err := control.Send(str("x")); !errors.Is(err, actor.ErrInvalidName) {
		t.Fatalf("send to credit$: %v, want ErrInvalidName", err)
	}
	if peers := tr.PeerStats(); len(peers) != 0 {
		t.Errorf("peers after two failed sends: %+v, want none", peers)
	}
}

// Sends that fail before queueing (dropping the peer they made) and sends
// that go, at once, to a peer not connected yet: every message sent is
// delivered, whichever peer entry each Send found.
func TestFailedSendsBesideGoodOnesToANewPeer(t *testing.T) {
	client, _ := serverWithTransport(t, actor.NewConf().Set(actor.KeyMessageMaxSize, "1"))
	for round := range 5 {
		server := newEnv(t, fmt.Sprintf("server%d", round), nil)
		ep := newEcho()
		register(t, server, "echo", ep)
		ref := client.RemoteRef(server.Address(), "echo")
		const each = 20
		var wg sync.WaitGroup
		errs := make(chan error, 2*each)
		for i := range each {
			wg.Add(2)
			go func() {
				defer wg.Done()
				if err := ref.Send(str(strings.Repeat("x", 2<<20))); !errors.Is(err, actor.ErrMessageTooLarge) {
					errs <- fmt.Errorf("too large send: %v", err)
				}
			}()
			go func() {
				defer wg.Done()
				if err := ref.Send(str(fmt.Sprint(i))); err != nil {
					errs <- fmt.Errorf("send %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		got := map[string]bool{}
		for range each {
			select {
			case m := <-ep.got:
				got[m.(*wrapperspb.StringValue).GetValue()] = true
			case <-time.After(waitFor):
				t.Fatalf("round %d: %d of %d messages delivered", round, len(got), each)
			}
		}
		if len(got) != each {
			t.Fatalf("round %d: %d distinct messages of %d", round, len(got), each)
		}
	}
}
