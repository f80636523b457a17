package netty

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"io"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// FuzzFrameDecoder feeds arbitrary bytes to the frame reader and the
// envelope parser: they must return errors, never panic or allocate more
// than the limit.
func FuzzFrameDecoder(f *testing.F) {
	good, _, _ := appendEnvelope(nil, "echo", "127.0.0.1:1", "future$1", wrapperspb.String("hi"), 1<<20)
	f.Add(good)
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
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, secret := range [][]byte{nil, []byte("secret")} {
			c := &rw{Reader: bytes.NewReader(data)}
			fr := newFrameReader(c, 4096)
			cfg := handshakeConfig{identity: "127.0.0.1:1", secret: secret}
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
