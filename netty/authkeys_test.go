package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// keyEcho replies to an ask with the key id its sender's connection
// authenticated with.
type keyEcho struct{ tr *netty.Transport }

func (k *keyEcho) Receive(*actor.Context, proto.Message) error { return nil }

func (k *keyEcho) ReceiveAndReply(ctx *actor.CallContext, _ proto.Message) error {
	id, ok := k.tr.PeerKeyID(ctx.SenderAddress().HostPort())
	if !ok {
		ctx.Reply(str("<no connection>"))
		return nil
	}
	ctx.Reply(str("key:" + id))
	return nil
}

// One acceptor takes connections authenticated with its own secret and with
// scoped ones (WithAuthKeys), and tells endpoints which key a peer used;
// a wrong key id or a wrong secret for the id fails with ErrAuthFailed.
func TestScopedSecrets(t *testing.T) {
	keys := map[string][]byte{"application_1": []byte("app one"), "application_2": []byte("app two")}
	tr := netty.NewTransport(netty.WithLogger(testLogger(t)), netty.WithAuthKeys(func(id string) ([]byte, bool) {
		s, ok := keys[id]
		return s, ok
	}))
	server, err := actor.NewEnv("rm", authConf("cluster"), actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, server) })
	register(t, server, "keys", &keyEcho{tr: tr})

	scoped := func(secret, keyID string) *actor.Conf {
		return authConf(secret).Set(netty.KeyAuthenticateKeyID, keyID)
	}
	for _, tc := range []struct {
		name string
		conf *actor.Conf
		want string // reply, or "" for ErrAuthFailed
	}{
		{"cluster secret", authConf("cluster"), "key:"},
		{"first application", scoped("app one", "application_1"), "key:application_1"},
		{"second application", scoped("app two", "application_2"), "key:application_2"},
		{"another application's secret", scoped("app one", "application_2"), ""},
		{"cluster secret under an application's id", scoped("cluster", "application_1"), ""},
		{"unknown key id", scoped("app one", "application_3"), ""},
		{"application secret as the default", authConf("app one"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tr.Stats().AuthFailures
			client := newClientEnv(t, "client", tc.conf)
			got, err := actor.AskAs[*wrapperspb.StringValue](testutil.Context(t, waitFor), client.RemoteRef(server.Address(), "keys"), str("which key?"))
			if tc.want == "" {
				if !errors.Is(err, netty.ErrAuthFailed) {
					t.Fatalf("ask: %v, want ErrAuthFailed", err)
				}
				testutil.Eventually(t, waitFor, "the failure counted", func() bool { return tr.Stats().AuthFailures > before })
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetValue() != tc.want {
				t.Fatalf("server saw %q, want %q", got.GetValue(), tc.want)
			}
		})
	}
}

// PeerKeyID reports the id this env presented on a connection it dialled,
// and nothing for a peer without a live connection.
func TestPeerKeyIDOfADialledConnection(t *testing.T) {
	keys := netty.WithAuthKeys(func(id string) ([]byte, bool) { return []byte("app"), id == "app" })
	server := newEnv(t, "server", authConf("cluster"), keys)
	register(t, server, "echo", newEcho())
	tr := netty.NewTransport(netty.WithLogger(testLogger(t)))
	dialer, err := actor.NewEnv("dialer", authConf("app").Set(netty.KeyAuthenticateKeyID, "app"), actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, dialer) })
	if _, ok := tr.PeerKeyID(server.Address().HostPort()); ok {
		t.Fatal("a key id for a peer never connected")
	}
	if got := askString(t, dialer.RemoteRef(server.Address(), "echo"), "x"); got != "x" {
		t.Fatalf("got %q", got)
	}
	if id, ok := tr.PeerKeyID(server.Address().HostPort()); !ok || id != "app" {
		t.Fatalf("PeerKeyID = %q, %v; want app, true", id, ok)
	}
}

// A key id that is not UTF-8 or too long is refused at start, naming the key.
func TestBadKeyIDConf(t *testing.T) {
	for _, id := range []string{string([]byte{0xff}), string(make([]byte, 256))} {
		_, err := netty.NewEnv("bad", authConf("s").Set(netty.KeyAuthenticateKeyID, id), netty.WithLogger(testLogger(t)))
		var ce *actor.ConfError
		if !errors.As(err, &ce) || ce.Key != netty.KeyAuthenticateKeyID {
			t.Fatalf("key id %q: err = %v, want a ConfError for %s", id, err, netty.KeyAuthenticateKeyID)
		}
	}
}
