package netty_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// RpcEnvSuite "send a message remotely".
func TestSendAMessageRemotely(t *testing.T) {
	server := newEnv(t, "server", nil)
	ep := newEcho()
	register(t, server, "send-remotely", ep)
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "send-remotely")
	if err := ref.Send(str("hello")); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, ep.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != "hello" {
		t.Fatalf("got %q", got)
	}
}

// RpcEnvSuite "ask a message remotely" and "sendWithReply: remotely".
func TestAskAMessageRemotely(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "ask-remotely", newEcho())
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "ask-remotely")
	for _, s := range []string{"hello", "Hi", ""} {
		if got := askString(t, ref, s); got != s {
			t.Fatalf("ask %q: got %q", s, got)
		}
	}
}

// refServer replies to any ask with its own ref, and answers "Echo" asks.
type refServer struct{}

func (refServer) Receive(*actor.Context, proto.Message) error { return nil }
func (refServer) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	if s, ok := msg.(*wrapperspb.StringValue); ok && s.GetValue() == "Echo" {
		ctx.Reply(s)
		return nil
	}
	ctx.Reply(ctx.Self().Proto())
	return nil
}

// RpcEnvSuite "send a RpcEndpointRef": a ref received in a reply works.
func TestSendARpcEndpointRef(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "send-ref", refServer{})
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "send-ref")
	rp, err := actor.AskAs[*messages.EndpointRef](testutil.Context(t, waitFor), ref, str("Hello"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.RefFromProto(rp)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "spark://send-ref@"+server.Address().HostPort() {
		t.Fatalf("ref %s", got)
	}
	if s := askString(t, got, "Echo"); s != "Echo" {
		t.Fatalf("got %q", s)
	}
}

type failer struct{ err error }

func (failer) Receive(*actor.Context, proto.Message) error { return nil }
func (f failer) ReceiveAndReply(ctx *actor.CallContext, _ proto.Message) error {
	ctx.SendFailure(f.err)
	return nil
}

// RpcEnvSuite "sendWithReply: remotely error": the failure crosses the wire.
func TestSendWithReplyRemotelyError(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "sendWithReply-error", failer{errors.New("Oops")})
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "sendWithReply-error")
	_, err := ref.AskSync(testutil.Context(t, waitFor), str("hi"))
	var re *actor.RemoteError
	if !errors.As(err, &re) || re.Message != "Oops" || re.Code != messages.ErrorCode_ERROR_CODE_APPLICATION {
		t.Fatalf("err = %#v", err)
	}
}

type badReplier struct{}

func (badReplier) Receive(*actor.Context, proto.Message) error { return nil }
func (badReplier) ReceiveAndReply(ctx *actor.CallContext, _ proto.Message) error {
	ctx.Reply(str("\xff\xfe not UTF-8")) // proto3 refuses to marshal it
	return nil
}

// RpcEnvSuite "sendWithReply: unserializable error": a reply that cannot be
// marshalled fails the asker promptly, with code ENCODE.
func TestSendWithReplyUnserializableError(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "unserializable", badReplier{})
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "unserializable")
	start := time.Now()
	_, err := ref.AskSyncWithTimeout(testutil.Context(t, waitFor), str("hi"), actor.RpcTimeout{Duration: 5 * time.Second, Key: "test.timeout"})
	var re *actor.RemoteError
	if !errors.As(err, &re) || re.Code != messages.ErrorCode_ERROR_CODE_ENCODE {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %s", d)
	}
}

// RpcEnvSuite "network events in server RpcEnv when another RpcEnv is in
// server mode".
func TestNetworkEventsServerToServer(t *testing.T) {
	server1 := newEnv(t, "server1", nil)
	server2, err := netty.NewEnv("server2", nil, netty.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	evs := newEvents()
	register(t, server1, "network-events", evs)
	register(t, server2, "network-events-2", newEcho())
	ref := lookup(t, server1, server2.Address(), "network-events-2")
	if err := ref.Send(str("hello")); err != nil {
		t.Fatal(err)
	}
	addr := server2.Address()
	evs.wait(t, "connected", &addr)
	shutdown(t, server2)
	evs.wait(t, "disconnected", &addr)
}

// RpcEnvSuite "network events in server RpcEnv when another RpcEnv is in
// client mode".
func TestNetworkEventsServerWithClient(t *testing.T) {
	server := newEnv(t, "server", nil)
	evs := newEvents()
	register(t, server, "network-events", evs)
	client, err := netty.NewEnv("client", nil, netty.WithClientMode(), netty.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	ref := lookup(t, client, server.Address(), "network-events")
	if err := ref.Send(str("hello")); err != nil {
		t.Fatal(err)
	}
	ev := evs.wait(t, "connected", nil)
	if ev.addr.IsZero() || ev.addr.Host != "127.0.0.1" {
		t.Fatalf("connected from %v, want the client's socket address", ev.addr)
	}
	shutdown(t, client)
	evs.wait(t, "disconnected", &ev.addr)
}

// RpcEnvSuite "network events in client RpcEnv when another RpcEnv is in
// server mode".
func TestNetworkEventsClientWithServer(t *testing.T) {
	server, err := netty.NewEnv("server", nil, netty.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	register(t, server, "network-events", newEcho())
	client := newClientEnv(t, "client", nil)
	evs := newEvents()
	register(t, client, "network-events", evs)
	ref := lookup(t, client, server.Address(), "network-events")
	if err := ref.Send(str("hello")); err != nil {
		t.Fatal(err)
	}
	addr := server.Address()
	evs.wait(t, "connected", &addr)
	shutdown(t, server)
	evs.wait(t, "disconnected", &addr)
}

// RpcEnvSuite "SPARK-14699: RpcEnv.shutdown should not fire onDisconnected
// events".
func TestShutdownShouldNotFireOnDisconnected(t *testing.T) {
	server := newEnv(t, "server", nil)
	register(t, server, "echo", newEcho())
	other, err := netty.NewEnv("other", nil, netty.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	evs := newEvents()
	register(t, other, "events", evs)
	ref := lookup(t, other, server.Address(), "echo")
	askString(t, ref, "hi")
	addr := server.Address()
	evs.wait(t, "connected", &addr)
	shutdown(t, other)
	for _, ev := range evs.all() {
		if ev.kind == "disconnected" || ev.kind == "error" {
			t.Fatalf("got %v on own shutdown", ev)
		}
	}
	if evs.all()[len(evs.all())-1].kind != "stop" {
		t.Fatalf("events %v: want OnStop last", evs.all())
	}
}

// RpcEnvSuite "port conflict".
func TestPortConflict(t *testing.T) {
	env := newEnv(t, "first", nil)
	other := newEnv(t, "second", nil, netty.WithPort(env.Address().Port))
	if other.Address().Port == env.Address().Port || other.Address().Port == 0 {
		t.Fatalf("ports %d and %d", env.Address().Port, other.Address().Port)
	}
}

// Without retries, a taken port is an error naming spark.port.maxRetries.
func TestPortConflictNoRetries(t *testing.T) {
	env := newEnv(t, "first", nil)
	conf := actor.NewConf().Set(netty.KeyPortMaxRetries, "0")
	_, err := netty.NewEnv("second", conf, netty.WithPort(env.Address().Port), netty.WithLogger(testLogger(t)))
	if err == nil || !strings.Contains(err.Error(), netty.KeyPortMaxRetries) {
		t.Fatalf("err = %v", err)
	}
}

// NettyRpcEnvSuite "non-existent endpoint".
func TestNonExistentEndpoint(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newClientEnv(t, "client", nil)
	_, err := client.SetupEndpointRef(testutil.Context(t, waitFor), server.Address(), "nonexist-endpoint")
	if !errors.Is(err, actor.ErrEndpointNotFound) {
		t.Fatalf("err = %v", err)
	}
	want := "spark://nonexist-endpoint@" + server.Address().HostPort()
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("err %q does not name %s", err, want)
	}
	_, err = client.SetupEndpointRefByURI(testutil.Context(t, waitFor), want)
	if !errors.Is(err, actor.ErrEndpointNotFound) || !strings.Contains(err.Error(), "Cannot find endpoint: "+want) {
		t.Fatalf("by URI: err = %v", err)
	}
}

// NettyRpcEnvSuite "advertise address different from bind address".
func TestAdvertiseAddressDifferentFromBindAddress(t *testing.T) {
	env := newEnv(t, "advertise", nil, netty.WithBindHost("localhost"), netty.WithAdvertiseHost("example.com"))
	if hp := env.Address().HostPort(); !strings.HasPrefix(hp, "example.com:") {
		t.Fatalf("address %s", hp)
	}
}

type panicker struct{ errs chan error }

func (p panicker) Receive(*actor.Context, proto.Message) error { return nil }
func (p panicker) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	if s, ok := msg.(*wrapperspb.StringValue); ok {
		panic("boom: " + s.GetValue())
	}
	ctx.Reply(msg)
	return nil
}
func (p panicker) OnError(_ *actor.Context, err error) { p.errs <- err }

// NettyRpcEnvSuite "StackOverflowError should be sent back and Dispatcher
// should survive": a panic in a remote handler is an error for the asker
// and the endpoint keeps serving.
func TestPanicShouldBeSentBackAndDispatcherShouldSurvive(t *testing.T) {
	server := newEnv(t, "server", actor.NewConf().Set(actor.KeyDispatcherThreads, "2"))
	p := panicker{errs: make(chan error, 10)}
	register(t, server, "panic", p)
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "panic")
	for range 2 {
		_, err := ref.AskSync(testutil.Context(t, waitFor), str("hello"))
		var re *actor.RemoteError
		if !errors.As(err, &re) || re.Code != messages.ErrorCode_ERROR_CODE_PANIC || !strings.Contains(err.Error(), "boom: hello") {
			t.Fatalf("err = %v", err)
		}
	}
	r, err := actor.AskAs[*wrapperspb.Int32Value](testutil.Context(t, waitFor), ref, wrapperspb.Int32(100))
	if err != nil || r.GetValue() != 100 {
		t.Fatalf("after panics: %v, %v", r, err)
	}
}

type sleeper struct{ d time.Duration }

func (sleeper) Receive(*actor.Context, proto.Message) error { return nil }
func (s sleeper) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	go func() {
		time.Sleep(s.d)
		ctx.Reply(msg)
	}()
	return nil
}

type registrar struct{ refs chan *actor.Ref }

func (r registrar) Receive(ctx *actor.Context, msg proto.Message) error {
	ref, err := ctx.Env().RefFromProto(msg.(*messages.EndpointRef))
	if err != nil {
		return err
	}
	r.refs <- ref
	return nil
}

// NettyRpcEnvSuite "SPARK-31233: ask rpcEndpointRef in client mode timeout":
// the error names the client's socket address.
func TestAskRpcEndpointRefInClientModeTimeout(t *testing.T) {
	server := newEnv(t, "server", nil)
	reg := registrar{refs: make(chan *actor.Ref, 1)}
	register(t, server, "registrar", reg)
	client := newClientEnv(t, "client", nil)
	receiver := register(t, client, "receiver", sleeper{d: 1200 * time.Millisecond})
	ref := lookup(t, client, server.Address(), "registrar")
	if err := ref.Send(receiver.Proto()); err != nil {
		t.Fatal(err)
	}
	var clientRef *actor.Ref
	select {
	case clientRef = <-reg.refs:
	case <-time.After(waitFor):
		t.Fatal("no Register")
	}
	if clientRef.String() != "spark-client://receiver" {
		t.Fatalf("client ref %s", clientRef)
	}
	_, err := clientRef.AskSyncWithTimeout(testutil.Context(t, waitFor), str("hi"), actor.RpcTimeout{Duration: time.Second, Key: actor.KeyAskTimeout})
	var te *actor.RpcTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:") || !strings.Contains(err.Error(), actor.KeyAskTimeout) {
		t.Fatalf("err %q: want the client's socket address and the key", err)
	}
	// And a server can ask the client when it answers in time.
	fast := register(t, client, "fast", newEcho())
	if err := ref.Send(fast.Proto()); err != nil {
		t.Fatal(err)
	}
	if s := askString(t, <-reg.refs, "x"); s != "x" {
		t.Fatalf("got %q", s)
	}
}

// Pending asks fail when the peer's connection drops, not after the timeout.
func TestPendingAsksFailWhenConnectionDrops(t *testing.T) {
	server, err := netty.NewEnv("server", nil, netty.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	register(t, server, "never", actor.ReceiveFunc(func(*actor.Context, proto.Message) error { return nil }))
	s := silent{asked: make(chan struct{}, 1)}
	register(t, server, "silent", s)
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "silent")
	f := ref.AskWithTimeout(testutil.Context(t, waitFor), str("hi"), actor.RpcTimeout{Duration: time.Minute, Key: "test.timeout"})
	waitAsked(t, s)
	start := time.Now()
	go shutdown(t, server)
	_, err = f.Result()
	if !errors.Is(err, actor.ErrConnectionClosed) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "Connection from "+server.Address().HostPort()+" closed") {
		t.Fatalf("err = %q", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}

// silent never replies; it reports the asks it got on asked when set.
type silent struct{ asked chan struct{} }

func (silent) Receive(*actor.Context, proto.Message) error { return nil }
func (s silent) ReceiveAndReply(*actor.CallContext, proto.Message) error {
	if s.asked != nil {
		s.asked <- struct{}{}
	}
	return nil
}

func waitAsked(t testing.TB, s silent) {
	t.Helper()
	select {
	case <-s.asked:
	case <-time.After(waitFor):
		t.Fatal("the ask did not arrive")
	}
}

// A failed connect fails every queued ask at once; within the backoff
// window the next ask fails at once with the same error, and once the
// window has passed the next message connects again.
func TestConnectFailureFailsQueuedAsks(t *testing.T) {
	client := newClientEnv(t, "client", nil)
	// A port that nobody listens on: bind one and close it.
	probe := newEnv(t, "probe", nil)
	addr := probe.Address()
	shutdown(t, probe)
	ref := client.RemoteRef(addr, "nobody")
	var futures []*actor.Future
	for range 5 {
		futures = append(futures, ref.AskWithTimeout(testutil.Context(t, waitFor), str("hi"), actor.RpcTimeout{Duration: time.Minute, Key: "test.timeout"}))
	}
	for _, f := range futures {
		select {
		case <-f.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("ask did not fail after the failed connect")
		}
		if _, err := f.Result(); err == nil || !strings.Contains(err.Error(), "failed to connect") {
			t.Fatalf("err = %v", err)
		}
	}
	// Now start a server on that very port: an ask reconnects once the
	// backoff window (100ms at first) has passed.
	server := newEnv(t, "server", actor.NewConf().Set(netty.KeyPortMaxRetries, "0"), netty.WithPort(addr.Port))
	register(t, server, "nobody", newEcho())
	deadline := time.Now().Add(waitFor)
	for {
		res, err := client.RemoteRef(server.Address(), "nobody").AskSync(testutil.Context(t, waitFor), str("again"))
		if err == nil {
			if got := res.(*wrapperspb.StringValue).GetValue(); got != "again" {
				t.Fatalf("got %q", got)
			}
			break
		}
		var ce *netty.ConnectError
		if !errors.As(err, &ce) || time.Now().After(deadline) {
			t.Fatalf("ask after the server started: %v", err)
		}
		<-time.After(time.Millisecond) // the window has not passed yet
	}
}

// A message over spark.rpc.message.maxSize fails on the sender with an
// error naming the key.
func TestMessageTooLarge(t *testing.T) {
	conf := actor.NewConf().Set(actor.KeyMessageMaxSize, "1")
	server := newEnv(t, "server", conf.Clone())
	ep := newEcho()
	register(t, server, "echo", ep)
	client := newClientEnv(t, "client", conf.Clone())
	ref := lookup(t, client, server.Address(), "echo")
	big := wrapperspb.Bytes(make([]byte, 1<<20))
	err := ref.Send(big)
	if !errors.Is(err, actor.ErrMessageTooLarge) || !strings.Contains(err.Error(), actor.KeyMessageMaxSize) {
		t.Fatalf("send: err = %v", err)
	}
	_, err = ref.AskSync(testutil.Context(t, waitFor), big)
	if !errors.Is(err, actor.ErrMessageTooLarge) {
		t.Fatalf("ask: err = %v", err)
	}
	// A message just under the limit goes through.
	ok := wrapperspb.Bytes(make([]byte, 1<<20-200))
	r, err := ref.AskSync(testutil.Context(t, waitFor), ok)
	if err != nil || len(r.(*wrapperspb.BytesValue).GetValue()) != len(ok.GetValue()) {
		t.Fatalf("ask under the limit: %v", err)
	}
}

// A plain protoactor actor on env A can RequestFuture an endpoint PID on env
// B over the transport.
func TestProtoactorRequestFutureAcrossEnvs(t *testing.T) {
	a := newEnv(t, "a", nil)
	b := newEnv(t, "b", nil)
	ref := register(t, b, "echo", newEcho())
	pid := protoactor.NewPID(b.Identity(), ref.Name())
	res, err := a.System().Root.RequestFuture(pid, str("via protoactor"), 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.(*wrapperspb.StringValue).GetValue() != "via protoactor" {
		t.Fatalf("got %v", res)
	}
	// And a plain Send reaches the endpoint.
	ep := newEcho()
	r2 := register(t, b, "sink", ep)
	a.System().Root.Send(protoactor.NewPID(b.Identity(), r2.Name()), str("sent"))
	if got := testutil.Recv(t, ep.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != "sent" {
		t.Fatalf("got %q", got)
	}
}

// Two server envs that send to each other at the same moment end up with
// one connection, and nothing is lost.
func TestSimultaneousDialsDedupe(t *testing.T) {
	for round := range 5 {
		a, ta := serverWithTransport(t, nil)
		b, tb := serverWithTransport(t, nil)
		epA, epB := newEcho(), newEcho()
		register(t, a, "sink", epA)
		register(t, b, "sink", epB)
		ra, rb := b.RemoteRef(a.Address(), "sink"), a.RemoteRef(b.Address(), "sink")
		const n = 50
		done := make(chan struct{})
		go func() {
			for i := range n {
				if err := rb.Send(wrapperspb.Int32(int32(i))); err != nil {
					t.Error(err)
				}
			}
			close(done)
		}()
		for i := range n {
			if err := ra.Send(wrapperspb.Int32(int32(i))); err != nil {
				t.Error(err)
			}
		}
		<-done
		for i := range n {
			if v := testutil.Recv(t, epA.got, waitFor, "a message").(*wrapperspb.Int32Value).GetValue(); v != int32(i) {
				t.Fatalf("round %d: a got %d, want %d", round, v, i)
			}
			if v := testutil.Recv(t, epB.got, waitFor, "a message").(*wrapperspb.Int32Value).GetValue(); v != int32(i) {
				t.Fatalf("round %d: b got %d, want %d", round, v, i)
			}
		}
		if ca, cb := ta.Stats().Connections, tb.Stats().Connections; ca != 1 || cb != 1 {
			t.Fatalf("round %d: %d and %d connections, want one each", round, ca, cb)
		}
		shutdown(t, a)
		shutdown(t, b)
	}
}

// Messages to one peer arrive in the order they were sent.
func TestOrderPreserved(t *testing.T) {
	server := newEnv(t, "server", nil)
	ep := newEcho()
	register(t, server, "sink", ep)
	client := newClientEnv(t, "client", nil)
	ref := client.RemoteRef(server.Address(), "sink")
	const n = 1000
	for i := range n {
		if err := ref.Send(wrapperspb.Int32(int32(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if v := testutil.Recv(t, ep.got, waitFor, "a message").(*wrapperspb.Int32Value).GetValue(); v != int32(i) {
			t.Fatalf("got %d, want %d", v, i)
		}
	}
}

var _ = context.Background
