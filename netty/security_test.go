package netty_test

import (
	"bufio"
	"crypto/rand"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func authConf(secret string) *actor.Conf {
	return actor.NewConf().Set(netty.KeyAuthenticate, "true").Set(netty.KeyAuthenticateSecret, secret)
}

func tlsConf(t testing.TB, conf *actor.Conf) *actor.Conf {
	cert, key := testutil.SelfSignedCert(t, t.TempDir())
	return conf.Set(netty.KeySSLEnabled, "true").
		Set(netty.KeySSLCertChain, cert).
		Set(netty.KeySSLPrivateKey, key).
		Set(netty.KeySSLTrustStore, cert)
}

func checkSend(t *testing.T, serverConf, clientConf *actor.Conf) {
	server := newEnv(t, "server", serverConf)
	ep := newEcho()
	register(t, server, "send-auth", ep)
	client := newClientEnv(t, "client", clientConf)
	ref := lookup(t, client, server.Address(), "send-auth")
	if err := ref.Send(str("hello")); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Recv(t, ep.got, waitFor, "a message").(*wrapperspb.StringValue).GetValue(); got != "hello" {
		t.Fatalf("got %q", got)
	}
}

func checkAsk(t *testing.T, serverConf, clientConf *actor.Conf) {
	server := newEnv(t, "server", serverConf)
	register(t, server, "ask-auth", newEcho())
	client := newClientEnv(t, "client", clientConf)
	ref := lookup(t, client, server.Address(), "ask-auth")
	if got := askString(t, ref, "hello"); got != "hello" {
		t.Fatalf("got %q", got)
	}
}

// RpcEnvSuite "send with authentication".
func TestSendWithAuthentication(t *testing.T) {
	checkSend(t, authConf("good"), authConf("good"))
}

// RpcEnvSuite "ask with authentication".
func TestAskWithAuthentication(t *testing.T) {
	checkAsk(t, authConf("good"), authConf("good"))
}

// RpcEnvSuite "send with SASL/AES encryption", here TLS.
func TestSendWithTLS(t *testing.T) {
	c := tlsConf(t, actor.NewConf())
	checkSend(t, c, c.Clone())
}

// RpcEnvSuite "ask with SASL/AES encryption", here TLS.
func TestAskWithTLS(t *testing.T) {
	c := tlsConf(t, actor.NewConf())
	checkAsk(t, c, c.Clone())
}

func TestSendWithAuthenticationAndTLS(t *testing.T) {
	c := tlsConf(t, authConf("good"))
	checkSend(t, c, c.Clone())
}

func TestAskWithAuthenticationAndTLS(t *testing.T) {
	c := tlsConf(t, authConf("good"))
	checkAsk(t, c, c.Clone())
}

// A wrong secret is refused and nothing is delivered, whichever side has it.
func TestWrongSecretIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name         string
		server, clnt *actor.Conf
	}{
		{"wrong secret", authConf("good"), authConf("bad")},
		{"client without auth", authConf("good"), actor.NewConf()},
		{"server without auth", actor.NewConf(), authConf("good")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := netty.NewTransport(netty.WithLogger(testLogger(t)))
			server, err := actor.NewEnv("server", tc.server, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { shutdown(t, server) })
			ep := newEcho()
			register(t, server, "secret", ep)
			client := newClientEnv(t, "client", tc.clnt)
			ref := client.RemoteRef(server.Address(), "secret")
			_ = ref.Send(str("must not arrive"))
			_, err = ref.AskSync(testutil.Context(t, waitFor), str("must not arrive"))
			if err == nil {
				t.Fatal("ask succeeded with a wrong secret")
			}
			if !errors.Is(err, netty.ErrAuthFailed) {
				t.Fatalf("err = %v, want ErrAuthFailed", err)
			}
			select {
			case m := <-ep.got:
				t.Fatalf("delivered %v", m)
			case <-time.After(100 * time.Millisecond):
			}
			if tr.Stats().AuthFailures == 0 {
				t.Fatalf("stats %+v: no auth failure counted", tr.Stats())
			}
		})
	}
}

// A TLS server refuses a plain-text client, and the other way round.
// TLS turned on with the spark.ssl.* keys alone, which every
// spark.ssl.rpc.* key falls back to, is on: a plain-text client is refused
// and a client with the same keys is served. Before, spark.ssl.enabled was
// not read: the server listened in plain text, with no warning.
func TestTLSFromTheInheritedKeys(t *testing.T) {
	cert, key := testutil.SelfSignedCert(t, t.TempDir())
	c := actor.NewConf().Set("spark.ssl.enabled", "true").Set("spark.ssl.certChain", cert).
		Set("spark.ssl.privateKey", key).Set("spark.ssl.trustStore", cert)
	server := newEnv(t, "server", c)
	register(t, server, "tls", newEcho())
	plain := newClientEnv(t, "plain", nil)
	if _, err := plain.RemoteRef(server.Address(), "tls").AskSync(testutil.Context(t, waitFor), str("x")); err == nil {
		t.Fatal("plain-text ask to a server with spark.ssl.enabled succeeded")
	}
	client := newClientEnv(t, "client", c.Clone())
	if got := askString(t, client.RemoteRef(server.Address(), "tls"), "over TLS"); got != "over TLS" {
		t.Fatalf("got %q", got)
	}
}

func TestTLSMismatchIsRefused(t *testing.T) {
	c := tlsConf(t, actor.NewConf())
	server := newEnv(t, "server", c)
	ep := newEcho()
	register(t, server, "tls", ep)
	client := newClientEnv(t, "client", nil)
	_, err := client.RemoteRef(server.Address(), "tls").AskSync(testutil.Context(t, waitFor), str("x"))
	if err == nil {
		t.Fatal("plain-text ask to a TLS server succeeded")
	}
	// It says why: before, it said only "EOF".
	if !strings.Contains(err.Error(), "does it require TLS? "+netty.KeySSLEnabled+" is off here") {
		t.Errorf("plain-text ask to a TLS server: %v; want it to ask whether the peer requires TLS", err)
	}
	plain := newEnv(t, "plain", nil)
	register(t, plain, "p", newEcho())
	tlsClient := newClientEnv(t, "tlsclient", c.Clone())
	if _, err := tlsClient.RemoteRef(plain.Address(), "p").AskSync(testutil.Context(t, waitFor), str("x")); err == nil {
		t.Fatal("TLS ask to a plain-text server succeeded")
	}
}

// A connector that does not know the secret gets nothing derived from it
// over a real socket: the acceptor's reply carries its nonce but no proof,
// and a wrong proof is refused without one. (A proof sent before the
// connector proved itself would let anyone who can connect try passwords
// offline.)
func TestUnauthenticatedConnectorGetsNoProof(t *testing.T) {
	server, tr := serverWithTransport(t, authConf("good"))
	register(t, server, "echo", newEcho())
	c, err := net.Dial("tcp", server.Address().HostPort())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	nonce := make([]byte, 32)
	rand.Read(nonce) //nolint:errcheck
	writeMsg(t, c, &messages.Handshake{Version: netty.ProtocolVersion, Identity: "127.0.0.1:1", Nonce: nonce})
	r := bufio.NewReader(c)
	var reply messages.HandshakeReply
	readMsg(t, r, &reply)
	if reply.Error != "" || len(reply.Nonce) != 32 {
		t.Fatalf("reply %v", &reply)
	}
	if len(reply.Proof) != 0 {
		t.Fatalf("the acceptor sent a proof of the secret (%x) to a connector that proved nothing", reply.Proof)
	}
	writeMsg(t, c, &messages.HandshakeProof{Proof: make([]byte, 32)})
	var res messages.HandshakeResult
	readMsg(t, r, &res)
	if res.Error == "" || len(res.Proof) != 0 || len(res.ProtoReflect().GetUnknown()) != 0 {
		t.Fatalf("result for a wrong proof: %v", &res)
	}
	expectClosed(t, c)
	if tr.Stats().AuthFailures == 0 {
		t.Fatalf("stats %+v: no auth failure counted", tr.Stats())
	}
	stillServesWith(t, server, authConf("good"))
}

// stillServesWith checks that a well-behaved client with conf is served.
func stillServesWith(t *testing.T, server *actor.Env, conf *actor.Conf) {
	t.Helper()
	client := newClientEnv(t, "good", conf)
	if got := askString(t, client.RemoteRef(server.Address(), "echo"), "still here"); got != "still here" {
		t.Fatalf("got %q", got)
	}
}
