package netty_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// tlsConfOf turns TLS on with the certificate and key given (none when
// empty) and the trust store given.
func tlsConfOf(cert, key, trust string) *actor.Conf {
	c := actor.NewConf().Set(netty.KeySSLEnabled, "true").Set(netty.KeySSLTrustStore, trust)
	if cert != "" {
		c.Set(netty.KeySSLCertChain, cert).Set(netty.KeySSLPrivateKey, key)
	}
	return c
}

// A connect that fails in the TLS handshake fails as the package's
// handshake failures do (ErrAuthFailed for a certificate refused on either
// side, ErrProtocol for one side without TLS) and names the key to fix.
// Before, the dialer's error matched none of them, and three of the four
// named no key: a reset connection, an x509 error, "tls: certificate
// required".
func TestTLSFailuresAreTypedAndNameTheKey(t *testing.T) {
	a, aKey := testutil.SelfSignedCert(t, t.TempDir())
	b, bKey := testutil.SelfSignedCert(t, t.TempDir())
	for _, tc := range []struct {
		name           string
		server, client *actor.Conf
		class          error
		key            string
	}{
		{"plain dialer, TLS listener", tlsConfOf(a, aKey, a), actor.NewConf(), netty.ErrProtocol, netty.KeySSLEnabled},
		{"TLS dialer, plain listener", actor.NewConf(), tlsConfOf(a, aKey, a), netty.ErrProtocol, netty.KeySSLEnabled},
		{"a listener's certificate the dialer does not trust", tlsConfOf(b, bKey, b), tlsConfOf(a, aKey, a), netty.ErrAuthFailed, netty.KeySSLTrustStore},
		{"a dialer without a certificate at a listener that wants one", tlsConfOf(a, aKey, a), tlsConfOf("", "", a), netty.ErrAuthFailed, netty.KeySSLCertChain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := newEnv(t, "server", tc.server)
			register(t, server, "echo", newEcho())
			client := newClientEnv(t, "client", tc.client)
			_, err := client.RemoteRef(server.Address(), "echo").AskSync(testutil.Context(t, waitFor), str("x"))
			if !errors.Is(err, tc.class) {
				t.Errorf("error %v does not match %v", err, tc.class)
			}
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error %v does not name %s", err, tc.key)
			}
		})
	}
}

// On the listener's side, a dialer whose certificate is missing or not
// trusted is an authentication failure (Stats.AuthFailures), and one that
// does not speak TLS a protocol error. Before, both counted as protocol
// errors, and the log named no key.
func TestTLSRefusalsAreCountedByKind(t *testing.T) {
	a, aKey := testutil.SelfSignedCert(t, t.TempDir())
	b, bKey := testutil.SelfSignedCert(t, t.TempDir())
	server, tr := serverWithTransport(t, tlsConfOf(a, aKey, a))
	register(t, server, "echo", newEcho())
	for _, tc := range []struct {
		name string
		conf *actor.Conf
		auth bool
	}{
		{"without a certificate", tlsConfOf("", "", a), true},
		{"with a certificate the listener does not trust", tlsConfOf(b, bKey, a), true},
		{"without TLS", actor.NewConf(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tr.Stats()
			client := newClientEnv(t, "client", tc.conf)
			if _, err := client.RemoteRef(server.Address(), "echo").AskSync(testutil.Context(t, waitFor), str("x")); err == nil {
				t.Fatal("the ask succeeded")
			}
			testutil.Eventually(t, waitFor, "the refusal counted", func() bool {
				st := tr.Stats()
				return st.AuthFailures > before.AuthFailures || st.ProtocolErrors > before.ProtocolErrors
			})
			st := tr.Stats()
			if got := st.AuthFailures > before.AuthFailures; got != tc.auth {
				t.Errorf("counted as an authentication failure: %v, want %v (protocol errors %d → %d)", got, tc.auth,
					before.ProtocolErrors, st.ProtocolErrors)
			}
		})
	}
}
