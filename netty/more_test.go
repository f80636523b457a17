package netty_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// asker asks every ref it is sent and reports the outcome.
type asker struct{ results chan error }

func (a asker) Receive(ctx *actor.Context, msg proto.Message) error {
	ref, err := ctx.Env().RefFromProto(msg.(*messages.EndpointRef))
	if err != nil {
		return err
	}
	f := ref.AskWithTimeout(context.Background(), str("question"), actor.RpcTimeout{Duration: time.Minute, Key: "test.timeout"})
	go func() {
		_, err := f.Result()
		a.results <- err
	}()
	return nil
}

// A reply whose type the asker's env does not know fails the ask at once
// with DECODE (the reply is for a future, so there is no sender to tell).
func TestUnknownReplyTypeFailsTheAsk(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	a := asker{results: make(chan error, 1)}
	register(t, server, "asker", a)
	c, r := rawClient(t, server, "client-raw")
	ref, _ := proto.Marshal(&messages.EndpointRef{Address: rawID("client-raw"), Name: "answerer", Client: true})
	writeMsg(t, c, &messages.WireEnvelope{Target: "asker", Type: "sparkrpc.messages.EndpointRef", Payload: ref})
	var req messages.WireEnvelope
	readMsg(t, r, &req)
	if req.Target != "answerer" || req.SenderId == "" {
		t.Fatalf("request %v", &req)
	}
	writeMsg(t, c, &messages.WireEnvelope{Target: req.SenderId, Type: "no.such.Reply", Payload: []byte{8, 1}})
	select {
	case err := <-a.results:
		var re *actor.RemoteError
		if !errors.As(err, &re) || re.Code != messages.ErrorCode_ERROR_CODE_DECODE || !strings.Contains(err.Error(), "no.such.Reply") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("ask did not fail")
	}
}

// Envs listen and talk over IPv6 loopback, with bracketed identities.
func TestIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	ln.Close()
	server := newEnv(t, "server", nil, netty.WithBindHost("::1"))
	if server.Address().Host != "[::1]" {
		t.Fatalf("address %v", server.Address())
	}
	register(t, server, "echo", newEcho())
	client := newClientEnv(t, "client", nil)
	ref, err := client.SetupEndpointRefByURI(testutil.Context(t, waitFor), "spark://echo@"+server.Address().HostPort())
	if err != nil {
		t.Fatal(err)
	}
	if got := askString(t, ref, "v6"); got != "v6" {
		t.Fatalf("got %q", got)
	}
}

// TLS with spark.ssl.rpc.verifyHostname=false accepts a certificate that
// does not name the dialled host, as long as it chains to the trust store.
func TestTLSWithoutHostnameVerification(t *testing.T) {
	conf := tlsConf(t, actor.NewConf())
	// The certificate names localhost and 127.0.0.1; advertise another name
	// for the same host: hostname verification must fail, chain-only pass.
	server := newEnv(t, "server", conf, netty.WithBindHost("127.0.0.2"))
	register(t, server, "echo", newEcho())
	if _, err := newClientEnv(t, "strict", conf.Clone()).RemoteRef(server.Address(), "echo").AskSync(testutil.Context(t, waitFor), str("x")); err == nil {
		t.Fatal("hostname verification accepted a certificate without 127.0.0.2")
	}
	lax := conf.Clone().Set(netty.KeySSLVerifyHostname, "false")
	if got := askString(t, newClientEnv(t, "lax", lax).RemoteRef(server.Address(), "echo"), "x"); got != "x" {
		t.Fatalf("got %q", got)
	}
}

// Authentication without a secret is a configuration error at start.
func TestAuthenticateWithoutSecret(t *testing.T) {
	_, err := netty.NewEnv("x", actor.NewConf().Set(netty.KeyAuthenticate, "true"), netty.WithLogger(testLogger(t)))
	if err == nil || !strings.Contains(err.Error(), netty.KeyAuthenticateSecret) {
		t.Fatalf("err = %v", err)
	}
}

// A client-mode env has no address, a client id as identity, and
// spark-client:// refs.
func TestClientModeIdentity(t *testing.T) {
	a := newClientEnv(t, "a", nil)
	b := newClientEnv(t, "b", nil)
	if !a.ClientMode() || !a.Address().IsZero() || a.Identity() == b.Identity() || a.Identity() == "" {
		t.Fatalf("a: %v %v %q, b: %q", a.ClientMode(), a.Address(), a.Identity(), b.Identity())
	}
	ref := register(t, a, "ep", newEcho())
	if ref.String() != "spark-client://ep" {
		t.Fatal(ref.String())
	}
	// No endpoint-verifier in client mode.
	if _, ok := a.Endpoint(actor.VerifierName); ok {
		t.Fatal("client-mode env has an endpoint-verifier")
	}
}

// flooder sends big messages to every ref it is sent.
type flooder struct{}

func (flooder) Receive(ctx *actor.Context, msg proto.Message) error {
	ref, err := ctx.Env().RefFromProto(msg.(*messages.EndpointRef))
	if err != nil {
		return err
	}
	big := wrapperspb.Bytes(make([]byte, 1<<20))
	for range 64 {
		if err := ref.Send(big); err != nil {
			return nil // the connection is gone: expected
		}
	}
	return nil
}

// A peer that stops reading has its connection closed after
// spark.rpc.io.connectionTimeout, and the others are told.
func TestPeerThatStopsReadingIsDropped(t *testing.T) {
	conf := actor.NewConf().Set(netty.KeyConnectionTimeout, "300ms")
	server, tr := serverWithTransport(t, conf)
	register(t, server, "flooder", flooder{})
	evs := newEvents()
	register(t, server, "events", evs)
	c, _ := rawClient(t, server, "client-stuck")
	ref, _ := proto.Marshal(&messages.EndpointRef{Address: rawID("client-stuck"), Name: "sink", Client: true})
	writeMsg(t, c, &messages.WireEnvelope{Target: "flooder", Type: "sparkrpc.messages.EndpointRef", Payload: ref})
	evs.wait(t, "disconnected", nil)
	if n := tr.Stats().Connections; n != 0 {
		t.Fatalf("%d connections left", n)
	}
}
