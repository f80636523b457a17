package bench

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
)

// tlsHarness returns a harness with a TLS setup, removed (and checked gone)
// when the test ends, measuring scenario name.
func tlsHarness(t *testing.T, name string) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sec, err := newTLSSetup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sec.close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(sec.dir); !os.IsNotExist(err) {
			t.Errorf("the certificate's folder is still there: %v", err)
		}
	})
	h := &harness{cfg: QuickConfig(), log: zerolog.Nop(), tls: sec}
	h.useTLS(lookupScenario(name))
	return h
}

// tlsHandshakeWith dials addr and tries a TLS handshake with cfg.
func tlsHandshakeWith(ctx context.Context, addr string, cfg *tls.Config) error {
	d := tls.Dialer{Config: cfg}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// The envs of a remote scenario in a TLS run talk TLS: they reach each
// other, a TLS handshake with the run's certificate succeeds on the server
// env's port, and a plaintext env cannot look up its endpoint. The same
// handshake fails on a plaintext env, so the check can fail.
func TestTLSRemoteEnvsSpeakOnlyTLS(t *testing.T) {
	h := tlsHarness(t, ScenarioRemoteSend)
	if h.connTLS == nil {
		t.Fatal("remote-send does not use the run's TLS")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, server, closeFn, err := newEnvPair(h)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if _, err := server.RegisterEndpoint("bench", &sinkEndpoint{sk: &sink{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SetupEndpointRef(ctx, server.Address(), "bench"); err != nil {
		t.Fatalf("TLS env to TLS env: %v", err)
	}
	if err := tlsHandshakeWith(ctx, server.Address().HostPort(), h.tls.client); err != nil {
		t.Fatalf("TLS handshake with the server env: %v", err)
	}
	plain, err := netty.NewEnv("plain", nil, netty.WithClientMode(), netty.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	defer shutdownEnv(plain)
	if _, err := plain.SetupEndpointRef(ctx, server.Address(), "bench"); err == nil {
		t.Fatal("a plaintext env looked up an endpoint of a TLS env")
	}

	h.useTLS(nil)
	plainServer, err := newNetworkedEnv(h, "plain-server")
	if err != nil {
		t.Fatal(err)
	}
	defer shutdownEnv(plainServer)
	if err := tlsHandshakeWith(ctx, plainServer.Address().HostPort(), h.tls.client); err == nil {
		t.Fatal("a TLS handshake with a plaintext env succeeded")
	}
}

// Only the remote scenarios take the run's TLS.
func TestTLSOnlyForRemoteScenarios(t *testing.T) {
	h := &harness{tls: &tlsSetup{}}
	for _, s := range registry() {
		remote := s.name == ScenarioRemoteSend || s.name == ScenarioRemoteAsk ||
			s.name == ScenarioRemoteFanIn || s.name == ScenarioRemoteAskUnderFlood
		h.useTLS(s)
		if got := h.connTLS != nil; got != remote {
			t.Errorf("%s: over TLS %v, want %v", s.name, got, remote)
		}
	}
}

// The raw TCP baseline's connections in a TLS run are TLS connections with
// the handshake done (both sides presented the certificate), and frames
// cross them.
func TestTLSTCPBaselineConns(t *testing.T) {
	h := tlsHarness(t, ScenarioRemoteAsk)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conns, err := newTCPConns(ctx, h.connTLS, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer conns.close()
	for i := range conns.clients {
		for side, nc := range map[string]net.Conn{"client": conns.clients[i], "server": conns.servers[i]} {
			tc, ok := nc.(*tls.Conn)
			if !ok {
				t.Fatalf("conn %d %s side is a %T, not a *tls.Conn", i, side, nc)
			}
			if st := tc.ConnectionState(); !st.HandshakeComplete || len(st.PeerCertificates) == 0 {
				t.Fatalf("conn %d %s side: handshake complete %v, peer certificates %d", i, side, st.HandshakeComplete, len(st.PeerCertificates))
			}
		}
		fw := newFrameWriter(conns.clients[i])
		if err := fw.writePing(&messages.BenchPing{Sender: 3, Seq: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		if err := fw.w.Flush(); err != nil {
			t.Fatal(err)
		}
		b, err := newFrameReader(conns.servers[i]).read()
		if err != nil {
			t.Fatal(err)
		}
		if sender, seq, err := decodeIDs(b); err != nil || sender != 3 || seq != uint64(i+1) {
			t.Fatalf("read sender %d seq %d (%v)", sender, seq, err)
		}
	}
}
