package netty

import (
	"crypto/ed25519"
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Peers that close mid-handshake and mid-frame, many times over, leave
// nothing behind: no socket, peer, source count, connection or goroutine.
func TestChurnLeavesNothingBehind(t *testing.T) {
	tr := NewTransport(WithLogger(zerolog.Nop()))
	server := testServer(t, tr)
	if _, err := server.RegisterEndpoint("sink", sink{}); err != nil {
		t.Fatal(err)
	}
	addr := server.Address().HostPort()
	settle := func() {
		testutil.Eventually(t, reconnectWait, "the transport's tables to empty", func() bool {
			tr.mu.Lock()
			raw, sources, inbound := len(tr.raw), len(tr.sources), tr.inbound
			tr.mu.Unlock()
			peers := 0
			tr.peers.Range(func(any, any) bool { peers++; return true })
			st := tr.Stats()
			return raw == 0 && sources == 0 && inbound == 0 && peers == 0 && st.Connections == 0 && st.Handshaking == 0
		})
	}
	settle()
	base := runtime.NumGoroutine()
	hello, _ := appendFrame(nil, &messages.Handshake{Version: ProtocolVersion, Identity: "127.0.0.1:1"})
	const rounds = 150
	for i := range rounds {
		name := fmt.Sprintf("client-churn-%d", i%7)
		// 1. Nothing at all; 2. half a hello; 3. a hello and nothing more.
		for _, b := range [][]byte{nil, hello[:len(hello)/2], hello} {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			if b != nil {
				nc.Write(b) //nolint:errcheck
			}
			nc.Close()
		}
		// 4. A client's hello, and a close before its proof.
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		cfg := testClient(name)
		h, _ := appendFrame(nil, &messages.Handshake{Version: ProtocolVersion, Identity: cfg.identity, ClientMode: true, PublicKey: cfg.clientKey.Public().(ed25519.PublicKey)})
		nc.Write(h) //nolint:errcheck
		nc.Close()
		// 5. An established client: an offer, an accept, a definition, a
		// frame by reference, and half a frame.
		c, _ := dialAs(t, addr, name)
		b := appendControl(nil, creditOffer, creditPayload(nil, 1000, 1<<30, ""))
		b = appendControl(b, creditAccept, nil)
		b = appendControl(b, refDefine, definePayload(nil, &envelopeRef{ref: 1, target: "sink", typ: "google.protobuf.StringValue"}))
		f := frames(t, "sink", wrapperspb.String("x"), wrapperspb.String("y"))
		b = append(b, f...)
		b = append(b, f[:len(f)-3]...)
		c.Write(b) //nolint:errcheck
		c.Close()
	}
	settle()
	testutil.Eventually(t, reconnectWait, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}
