package actor_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Two or more envs on a MemNetwork: the remote cases of RpcEnvSuite without
// sockets.

func serverEnv(t *testing.T, n *actor.MemNetwork, host string, port int, opts ...actor.Option) *actor.Env {
	t.Helper()
	return newEnv(t, nil, append(opts, actor.WithTransport(n.Transport(host, port)))...)
}

func clientEnv(t *testing.T, n *actor.MemNetwork, opts ...actor.Option) *actor.Env {
	t.Helper()
	return newEnv(t, nil, append(opts, actor.WithTransport(n.ClientTransport()))...)
}

func setupRef(t *testing.T, from, to *actor.Env, name string) *actor.Ref {
	t.Helper()
	ref, err := from.SetupEndpointRef(testutil.Context(t, testTimeout), to.Address(), name)
	if err != nil {
		t.Fatalf("SetupEndpointRef(%s, %s): %v", to.Address(), name, err)
	}
	return ref
}

func TestMemNetworkEnvs(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	if server.ClientMode() || server.Address() != actor.NewRpcAddress("host1", 1) || server.Identity() != "host1:1" {
		t.Errorf("server: ClientMode %v, Address %v, Identity %q", server.ClientMode(), server.Address(), server.Identity())
	}
	if !client.ClientMode() || !client.Address().IsZero() || client.Identity() == "" {
		t.Errorf("client: ClientMode %v, Address %v, Identity %q", client.ClientMode(), client.Address(), client.Identity())
	}
	if _, ok := server.Endpoint(actor.VerifierName); !ok {
		t.Errorf("a listening env has no %s", actor.VerifierName)
	}
	if _, ok := client.Endpoint(actor.VerifierName); ok {
		t.Errorf("a client-mode env has a %s", actor.VerifierName)
	}
	ref := register(t, client, "x", &testEndpoint{})
	if got, want := ref.String(), "spark-client://x"; got != want {
		t.Errorf("client ref = %q, want %q", got, want)
	}
	ref = register(t, server, "x", &testEndpoint{})
	if got, want := ref.String(), "spark://x@host1:1"; got != want {
		t.Errorf("server ref = %q, want %q", got, want)
	}
	// A second transport at the same address does not start.
	if e, err := actor.NewEnv("dup", nil, actor.WithLogger(testLogger(t)), actor.WithTransport(n.Transport("host1", 1))); err == nil {
		shutdown(t, e)
		t.Fatalf("a second env started at host1:1")
	}
}

func TestMemNetworkSendRemotely(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := &testEndpoint{}
	register(t, server, "send-remotely", ep)
	ref := setupRef(t, client, server, "send-remotely")
	if got, want := ref.String(), "spark://send-remotely@host1:1"; got != want {
		t.Errorf("ref = %q, want %q", got, want)
	}
	if err := ref.Send(str("hello")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ep.waitFor(t, "receive:hello")
}

func TestMemNetworkAskRemotely(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	senders := make(chan actor.RpcAddress, 1)
	register(t, server, "ask-remotely", &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		senders <- ctx.SenderAddress()
		ctx.Reply(msg)
		return nil
	}})
	ref := setupRef(t, client, server, "ask-remotely")
	if s := askString(t, ref, "hello"); s != "hello" {
		t.Fatalf("remote ask = %q, want hello", s)
	}
	// The sender of a client-mode env is known by its connection's address.
	if addr := testutil.Recv(t, senders, testTimeout, "the sender address"); addr.IsZero() || addr.Host != client.Identity() {
		t.Errorf("SenderAddress() = %v, want the client's connection address", addr)
	}
	// And from server to server, the sender is the listen address.
	other := serverEnv(t, n, "host2", 2)
	ref = setupRef(t, other, server, "ask-remotely")
	askString(t, ref, "hi")
	if addr := testutil.Recv(t, senders, testTimeout, "the sender address"); addr != other.Address() {
		t.Errorf("SenderAddress() = %v, want %v", addr, other.Address())
	}
}

func TestMemNetworkAskRemoteFailure(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, server, "failing", &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		switch text(msg) {
		case "fail":
			ctx.SendFailure(errors.New("Oops"))
		case "panic":
			panic("remote boom")
		case "int":
			return actor.ErrUnsupportedMessage
		}
		return nil
	}})
	ref := setupRef(t, client, server, "failing")
	ctx := testutil.Context(t, testTimeout)
	_, err := ref.AskSync(ctx, str("fail"))
	var re *actor.RemoteError
	if !errors.As(err, &re) || err.Error() != "Oops" {
		t.Errorf("remote SendFailure = %v (%T), want a *RemoteError \"Oops\"", err, err)
	}
	_, err = ref.AskSync(ctx, str("panic"))
	if !errors.As(err, &re) || re.Code != messages.ErrorCode_ERROR_CODE_PANIC || !strings.Contains(err.Error(), "remote boom") {
		t.Errorf("remote panic = %v, want a *RemoteError with the panic", err)
	}
	_, err = ref.AskSync(ctx, str("int"))
	if !errors.Is(err, actor.ErrUnsupportedMessage) || !strings.HasPrefix(err.Error(), "Unsupported message google.protobuf.StringValue from ") {
		t.Errorf("remote unsupported message = %v", err)
	}
	// The asker sees the typed error a local ask gets, with its fields.
	var ue *actor.UnsupportedMessageError
	if !errors.As(err, &ue) || ue.Type != "google.protobuf.StringValue" || ue.Error() != err.Error() {
		t.Errorf("remote unsupported message: errors.As *UnsupportedMessageError = %+v, want its type and the remote text %q", ue, err)
	}
}

func TestMemNetworkSendRefAcross(t *testing.T) {
	// A client registers an endpoint and sends its reference to the server,
	// which asks it back over the client's connection.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, client, "receiver", &testEndpoint{})
	replies := make(chan string, 1)
	register(t, server, "registrar", &testEndpoint{receive: func(ctx *actor.Context, msg proto.Message) error {
		ref, err := ctx.Env().RefFromProto(msg.(*messages.EndpointRef))
		if err != nil {
			return err
		}
		go func() {
			res, err := actor.AskAs[*wrapperspb.StringValue](testutil.Context(t, testTimeout), ref, str("ping"))
			if err != nil {
				replies <- "error: " + err.Error()
				return
			}
			replies <- res.GetValue()
		}()
		return nil
	}})
	receiver, _ := client.Endpoint("receiver")
	registrar := setupRef(t, client, server, "registrar")
	if err := registrar.Send(receiver.Proto()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, replies, testTimeout, "the server's ask to the client"); got != "ping" {
		t.Fatalf("server asked the client's endpoint: %s", got)
	}
}

func TestMemNetworkAskTimeout(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, server, "silent", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }})
	ref := setupRef(t, client, server, "silent")
	const key = "spark.rpc.short.timeout"
	_, err := ref.AskSyncWithTimeout(testutil.Context(t, testTimeout), str("hello"), actor.RpcTimeout{Duration: 10 * time.Millisecond, Key: key})
	checkTimeoutError(t, err, key)
	if !strings.Contains(err.Error(), "host1:1") {
		t.Errorf("timeout %q does not name the remote address", err)
	}
}

func TestMemNetworkUnknownEndpoint(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	_, err := client.SetupEndpointRef(testutil.Context(t, testTimeout), server.Address(), "nonexist-endpoint")
	var nf *actor.EndpointNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("lookup of a missing endpoint = %v (%T), want *EndpointNotFoundError", err, err)
	}
	if want := "Cannot find endpoint: spark://nonexist-endpoint@host1:1"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	_, err = client.SetupEndpointRefByURI(testutil.Context(t, testTimeout), "spark://nonexist-endpoint@host1:1")
	if !errors.Is(err, actor.ErrEndpointNotFound) {
		t.Errorf("lookup by URI = %v, want ErrEndpointNotFound", err)
	}
	// An unverified ref to a missing name fails at once, with the remote text.
	ref := client.RemoteRef(server.Address(), "nope")
	f := ref.AskWithTimeout(testutil.Context(t, testTimeout), str("hi"), actor.RpcTimeout{Duration: time.Hour, Key: actor.KeyAskTimeout})
	_, err = f.Wait(testutil.Context(t, testTimeout))
	if !errors.Is(err, actor.ErrEndpointNotFound) || err.Error() != "Could not find nope." {
		t.Errorf("ask to a missing remote endpoint = %v, want \"Could not find nope.\"", err)
	}
	if !errors.As(err, &nf) || nf.Name != "nope" {
		t.Errorf("ask to a missing remote endpoint: errors.As *EndpointNotFoundError = %+v, want Name \"nope\"", nf)
	}
	// A one-way message to a missing remote endpoint is counted as dropped there.
	if err := ref.Send(str("lost")); err != nil {
		t.Errorf("remote Send to a missing endpoint = %v; the sender cannot know", err)
	}
	testutil.Eventually(t, testTimeout, fmt.Sprintf("server dropped %d messages, want 1", server.Dropped()), func() bool { return server.Dropped() == 1 })
	// A lookup on the env's own address needs no network.
	if _, err := server.SetupEndpointRef(testutil.Context(t, testTimeout), server.Address(), "nope"); !errors.Is(err, actor.ErrEndpointNotFound) ||
		err.Error() != "Cannot find endpoint: spark://nope@host1:1" {
		t.Errorf("local lookup of a missing endpoint = %v", err)
	}
	if ref, err := server.SetupEndpointRef(testutil.Context(t, testTimeout), server.Address(), actor.VerifierName); err != nil || ref.Name() != actor.VerifierName {
		t.Errorf("local lookup = %v, %v", ref, err)
	}
	// A lookup of an env that is not there fails without waiting for the lookup timeout.
	_, err = client.SetupEndpointRef(testutil.Context(t, testTimeout), actor.NewRpcAddress("nowhere", 9), "x")
	if !errors.Is(err, actor.ErrConnectionClosed) {
		t.Errorf("lookup on a missing env = %v, want ErrConnectionClosed", err)
	}
}

func TestMemNetworkDisconnectFailsPendingAsks(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	asked := make(chan struct{}, 1)
	register(t, server, "never", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error {
		asked <- struct{}{}
		return nil
	}})
	ref := setupRef(t, client, server, "never")
	f := ref.AskWithTimeout(testutil.Context(t, testTimeout), str("q"), actor.InfiniteTimeout())
	testutil.Recv(t, asked, testTimeout, "the ask")
	shutdown(t, server)
	_, err := f.Wait(testutil.Context(t, testTimeout))
	if !errors.Is(err, actor.ErrConnectionClosed) {
		t.Fatalf("pending ask after the server shut down = %v (%T), want ErrConnectionClosed", err, err)
	}
	var ce *actor.ConnectionClosedError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "Connection from host1:1 closed") {
		t.Errorf("error %q, want \"Connection from host1:1 closed\"", err)
	}
}

func TestMemNetworkClientShutdownFailsServerAsks(t *testing.T) {
	// The reverse direction: the server asks an endpoint of a client that
	// then goes away.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	asked := make(chan struct{}, 1)
	register(t, client, "never", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error {
		asked <- struct{}{}
		return nil
	}})
	refs := make(chan *actor.Ref, 1)
	register(t, server, "registrar", &testEndpoint{receive: func(ctx *actor.Context, msg proto.Message) error {
		ref, err := ctx.Env().RefFromProto(msg.(*messages.EndpointRef))
		refs <- ref
		return err
	}})
	never, _ := client.Endpoint("never")
	if err := setupRef(t, client, server, "registrar").Send(never.Proto()); err != nil {
		t.Fatal(err)
	}
	ref := testutil.Recv(t, refs, testTimeout, "the client's ref")
	if ref == nil {
		t.Fatal("RefFromProto failed")
	}
	if got, want := ref.String(), "spark-client://never"; got != want {
		t.Errorf("ref = %q, want %q", got, want)
	}
	f := ref.AskWithTimeout(testutil.Context(t, testTimeout), str("q"), actor.InfiniteTimeout())
	testutil.Recv(t, asked, testTimeout, "the ask")
	shutdown(t, client)
	if _, err := f.Wait(testutil.Context(t, testTimeout)); !errors.Is(err, actor.ErrConnectionClosed) {
		t.Fatalf("pending ask after the client shut down = %v, want ErrConnectionClosed", err)
	}
}

func TestMemNetworkEventsServerToServer(t *testing.T) {
	// RpcEnvSuite "network events in server RpcEnv when another RpcEnv is in
	// server mode".
	n := actor.NewMemNetwork()
	server1 := serverEnv(t, n, "host1", 1)
	server2 := serverEnv(t, n, "host2", 2)
	ep := &testEndpoint{}
	register(t, server1, "network-events", ep)
	register(t, server2, "target", &testEndpoint{})
	if err := server1.RemoteRef(server2.Address(), "target").Send(str("hi")); err != nil {
		t.Fatal(err)
	}
	ep.waitFor(t, "connected:")
	shutdown(t, server2)
	ep.waitFor(t, "disconnected:")
	want := []string{"start", "connected:host2:2", "disconnected:host2:2"}
	if got := ep.Events(); !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestMemNetworkEventsServerSeesClient(t *testing.T) {
	// "network events in server RpcEnv when another RpcEnv is in client mode"
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := &testEndpoint{}
	register(t, server, "network-events", ep)
	setupRef(t, client, server, "network-events")
	ep.waitFor(t, "connected:")
	shutdown(t, client)
	ep.waitFor(t, "disconnected:")
	if n := ep.count("connected:"); n != 1 {
		t.Errorf("OnConnected ran %d times: %q", n, ep.Events())
	}
}

func TestMemNetworkEventsClientSeesServer(t *testing.T) {
	// "network events in client RpcEnv when another RpcEnv is in server mode"
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := &testEndpoint{}
	register(t, client, "network-events", ep)
	setupRef(t, client, server, actor.VerifierName)
	ep.waitFor(t, "connected:")
	shutdown(t, server)
	ep.waitFor(t, "disconnected:")
	want := []string{"start", "connected:host1:1", "disconnected:host1:1"}
	if got := ep.Events(); !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestMemNetworkOwnShutdownFiresNoDisconnected(t *testing.T) {
	// SPARK-14699: an env's own Shutdown does not deliver OnDisconnected or
	// OnNetworkError to its own endpoints.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	other := serverEnv(t, n, "host2", 2)
	ep := &testEndpoint{}
	register(t, other, "mock", ep)
	register(t, server, "target", &testEndpoint{})
	askString(t, setupRef(t, other, server, "target"), "hello")
	ep.waitFor(t, "connected:")
	shutdown(t, other)
	if got := ep.Events(); !slices.Equal(got, []string{"start", "connected:host1:1", "stop"}) {
		t.Fatalf("calls = %q, want start, connected, stop and nothing else", got)
	}
}

func TestMemNetworkProtoactorRequestFuture(t *testing.T) {
	// Plain protoactor code on one env reaches an endpoint PID of another.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := &testEndpoint{}
	register(t, server, "raw", ep)
	ref := setupRef(t, client, server, "raw")
	if ref.PID().Address != "host1:1" || ref.PID().Id != "raw" {
		t.Errorf("PID = %v, want host1:1/raw", ref.PID())
	}
	res, err := client.System().Root.RequestFuture(ref.PID(), str("raw"), testTimeout).Result()
	if err != nil {
		t.Fatalf("RequestFuture: %v", err)
	}
	if m, ok := res.(proto.Message); !ok || text(m) != "raw" {
		t.Fatalf("RequestFuture = %v, want raw", res)
	}
	client.System().Root.Send(ref.PID(), str("one-way"))
	ep.waitFor(t, "receive:one-way")
}

func TestMemNetworkMessageTooLarge(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := newEnv(t, actor.NewConf().Set(actor.KeyMessageMaxSize, "1"), actor.WithTransport(n.ClientTransport()))
	register(t, server, "echo", &testEndpoint{})
	ref := setupRef(t, client, server, "echo")
	big := str(strings.Repeat("x", 2<<20))
	err := ref.Send(big)
	var tl *actor.MessageTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, actor.ErrMessageTooLarge) || !strings.Contains(err.Error(), actor.KeyMessageMaxSize) {
		t.Errorf("Send of a too large message = %v, want *MessageTooLargeError naming %s", err, actor.KeyMessageMaxSize)
	}
	if _, err := ref.AskSync(testutil.Context(t, testTimeout), big); !errors.Is(err, actor.ErrMessageTooLarge) {
		t.Errorf("ask with a too large message = %v, want ErrMessageTooLarge", err)
	}
	if s := askString(t, ref, "small"); s != "small" {
		t.Errorf("small ask after = %q", s)
	}
}

func TestMemNetworkMessagesAreCopied(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	got := make(chan proto.Message, 1)
	register(t, server, "sink", actor.ReceiveFunc(func(_ *actor.Context, msg proto.Message) error {
		got <- msg
		return nil
	}))
	msg := str("original")
	if err := setupRef(t, client, server, "sink").Send(msg); err != nil {
		t.Fatal(err)
	}
	if m := testutil.Recv(t, got, testTimeout, "the message"); m == proto.Message(msg) || text(m) != "original" {
		t.Fatalf("received %v (same pointer: %v)", m, m == proto.Message(msg))
	}
}

func TestMemNetworkLateReplyIsNotADrop(t *testing.T) {
	// A reply that arrives after its ask timed out is ignored; it is not a
	// message dropped by a stopped endpoint.
	n := actor.NewMemNetwork()
	var drops atomic.Int64
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n, actor.WithDropHandler(func(string, proto.Message) { drops.Add(1) }))
	pending := make(chan *actor.CallContext, 2)
	register(t, server, "late", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		pending <- ctx
		return nil
	}})
	ref := setupRef(t, client, server, "late")
	for _, fail := range []bool{false, true} {
		_, err := ref.AskSyncWithTimeout(testutil.Context(t, testTimeout), str("q"), actor.RpcTimeout{Duration: 5 * time.Millisecond, Key: "k"})
		checkTimeoutError(t, err, "k")
		cc := testutil.Recv(t, pending, testTimeout, "the ask")
		if fail {
			cc.SendFailure(errors.New("too late"))
		} else {
			cc.Reply(str("too late"))
		}
	}
	// A barrier: this ask's reply comes after the late ones on the same link.
	register(t, server, "echo", &testEndpoint{})
	if s := askString(t, setupRef(t, client, server, "echo"), "now"); s != "now" {
		t.Fatalf("ask = %q", s)
	}
	if client.Dropped() != 0 || drops.Load() != 0 {
		t.Fatalf("late replies were counted as dropped: Dropped() = %d, drop handler %d", client.Dropped(), drops.Load())
	}
}

func TestMemNetworkOwnShutdownFailsPendingAsks(t *testing.T) {
	// An env that shuts down fails its own asks still waiting on other envs.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	asked := make(chan struct{}, 1)
	register(t, server, "never", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error {
		asked <- struct{}{}
		return nil
	}})
	f := setupRef(t, client, server, "never").AskWithTimeout(testutil.Context(t, testTimeout), str("q"), actor.InfiniteTimeout())
	testutil.Recv(t, asked, testTimeout, "the ask")
	shutdown(t, client)
	if _, err := f.Wait(testutil.Context(t, testTimeout)); !errors.Is(err, actor.ErrEnvStopped) {
		t.Fatalf("pending ask after its own env shut down = %v, want ErrEnvStopped", err)
	}
}
