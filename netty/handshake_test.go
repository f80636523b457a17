package netty

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

func runHandshake(t *testing.T, dialer, acceptor handshakeConfig, verdict acceptVerdict) (dres, ares handshakeResult, derr, aerr error) {
	t.Helper()
	dc, ac := net.Pipe()
	defer dc.Close()
	defer ac.Close()
	deadline := time.Now().Add(5 * time.Second)
	dc.SetDeadline(deadline) //nolint:errcheck
	ac.SetDeadline(deadline) //nolint:errcheck
	done := make(chan struct{})
	go func() {
		defer close(done)
		ares, aerr = acceptHandshake(newFrameReader(ac, 4096), ac, acceptor, verdict)
		if aerr != nil {
			ac.Close()
		}
	}()
	dres, derr = dialHandshake(newFrameReader(dc, 4096), dc, dialer)
	if derr != nil {
		dc.Close()
	}
	<-done
	return
}

func accept(handshakeResult) error { return nil }

// testClient is the handshake part of a client-mode dialer named name: its
// key derives from the name, its identity from the key.
func testClient(name string) handshakeConfig {
	seed := sha256.Sum256([]byte(name))
	key := ed25519.NewKeyFromSeed(seed[:])
	return handshakeConfig{identity: clientIdentity(key.Public().(ed25519.PublicKey)), clientMode: true, clientKey: key}
}

func TestHandshake(t *testing.T) {
	server := handshakeConfig{identity: "127.0.0.1:7077"}
	client := testClient("client-1")
	withSecret := func(c handshakeConfig, s string) handshakeConfig { c.secret = []byte(s); return c }
	dup := func(handshakeResult) error { return ErrDuplicateConnection }
	for _, tc := range []struct {
		name               string
		dialer, acceptor   handshakeConfig
		verdict            acceptVerdict
		dialErr, acceptErr error
	}{
		{"plain", client, server, accept, nil, nil},
		{"server to server", handshakeConfig{identity: "127.0.0.1:1"}, server, accept, nil, nil},
		{"auth", withSecret(client, "good"), withSecret(server, "good"), accept, nil, nil},
		{"dialer has the wrong secret", withSecret(client, "bad"), withSecret(server, "good"), accept, ErrAuthFailed, ErrAuthFailed},
		{"acceptor has the wrong secret", withSecret(client, "good"), withSecret(server, "bad"), accept, ErrAuthFailed, ErrAuthFailed},
		{"dialer without auth", client, withSecret(server, "good"), accept, ErrAuthFailed, ErrAuthFailed},
		{"acceptor without auth", withSecret(client, "good"), server, accept, ErrAuthFailed, ErrAuthFailed},
		{"bad listen identity", handshakeConfig{identity: "not a host"}, server, accept, ErrProtocol, ErrProtocol},
		{"duplicate", client, server, dup, ErrDuplicateConnection, ErrDuplicateConnection},
		{"duplicate after auth", withSecret(client, "s"), withSecret(server, "s"), dup, ErrDuplicateConnection, ErrDuplicateConnection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dres, ares, derr, aerr := runHandshake(t, tc.dialer, tc.acceptor, tc.verdict)
			if !errors.Is(derr, tc.dialErr) || (tc.dialErr == nil) != (derr == nil) {
				t.Errorf("dialer: err = %v, want %v", derr, tc.dialErr)
			}
			if !errors.Is(aerr, tc.acceptErr) || (tc.acceptErr == nil) != (aerr == nil) {
				t.Errorf("acceptor: err = %v, want %v", aerr, tc.acceptErr)
			}
			if derr == nil && dres.identity != tc.acceptor.identity {
				t.Errorf("dialer learnt %q", dres.identity)
			}
			if aerr == nil && (ares.identity != tc.dialer.identity || ares.clientMode != tc.dialer.clientMode) {
				t.Errorf("acceptor learnt %+v", ares)
			}
		})
	}
}

// The proof binds the label, both nonces, both identities and the key id.
func TestProofBindsEverything(t *testing.T) {
	s := []byte("secret")
	n1, n2 := newNonce(), newNonce()
	base := proof(s, labelDialer, n1, n2, "a", "b", "k")
	for name, other := range map[string][]byte{
		"label":    proof(s, labelAcceptor, n1, n2, "a", "b", "k"),
		"nonces":   proof(s, labelDialer, n2, n1, "a", "b", "k"),
		"ids":      proof(s, labelDialer, n1, n2, "b", "a", "k"),
		"boundary": proof(s, labelDialer, n1, n2, "ab", "", "k"),
		"key id":   proof(s, labelDialer, n1, n2, "a", "b", "j"),
		"no key":   proof(s, labelDialer, n1, n2, "a", "bk", ""),
		"secret":   proof([]byte("other"), labelDialer, n1, n2, "a", "b", "k"),
	} {
		if string(other) == string(base) {
			t.Errorf("%s does not change the proof", name)
		}
	}
}

// pipeFrames is one side of a net.Pipe that reads and writes handshake
// frames for a test playing a peer by hand.
type pipeFrames struct {
	t  *testing.T
	c  net.Conn
	fr *frameReader
}

func newPipeFrames(t *testing.T, c net.Conn) *pipeFrames {
	c.SetDeadline(time.Now().Add(5 * time.Second)) //nolint:errcheck
	return &pipeFrames{t: t, c: c, fr: newFrameReader(c, 4096)}
}

func (p *pipeFrames) send(m proto.Message) {
	p.t.Helper()
	if err := sendFrame(p.c, m); err != nil {
		p.t.Fatalf("send %T: %v", m, err)
	}
}

func (p *pipeFrames) read(m proto.Message) error { return p.fr.readMessage(m) }

// handshakeSide runs f in a goroutine and returns its error on a channel;
// the connection is closed when f fails, as the transport does.
func handshakeSide(c net.Conn, f func(fr *frameReader) error) <-chan error {
	ch := make(chan error, 1)
	c.SetDeadline(time.Now().Add(5 * time.Second)) //nolint:errcheck
	go func() {
		err := f(newFrameReader(c, 4096))
		if err != nil {
			c.Close()
		}
		ch <- err
	}()
	return ch
}

// A dialer's proof recorded from one handshake does not authenticate
// another, and neither does an acceptor's proof: each covers the other
// side's fresh nonce.
func TestHandshakeReplay(t *testing.T) {
	secret := []byte("s")
	acc := handshakeConfig{identity: "127.0.0.1:7077", secret: secret}
	dial := testClient("client-1")
	dial.secret = secret

	// Record a good handshake, played by hand on the dialer's side.
	ac, dc := net.Pipe()
	defer ac.Close()
	defer dc.Close()
	aerr := handshakeSide(ac, func(fr *frameReader) error {
		_, err := acceptHandshake(fr, ac, acc, accept)
		return err
	})
	d := newPipeFrames(t, dc)
	hello := &messages.Handshake{Version: ProtocolVersion, Identity: dial.identity, ClientMode: true, PublicKey: dial.clientKey.Public().(ed25519.PublicKey), Nonce: newNonce()}
	d.send(hello)
	var reply messages.HandshakeReply
	if err := d.read(&reply); err != nil {
		t.Fatal(err)
	}
	dialerProof := &messages.HandshakeProof{Proof: proof(secret, labelDialer, hello.Nonce, reply.Nonce, dial.identity, reply.Identity, ""),
		Signature: ed25519.Sign(dial.clientKey, transcript(labelClient, hello.Nonce, reply.Nonce, dial.identity, reply.Identity, ""))}
	d.send(dialerProof)
	var result messages.HandshakeResult
	if err := d.read(&result); err != nil || result.Error != "" {
		t.Fatalf("recorded handshake: %v %v", err, &result)
	}
	if err := <-aerr; err != nil {
		t.Fatal(err)
	}

	t.Run("dialer proof replayed to the acceptor", func(t *testing.T) {
		ac, dc := net.Pipe()
		defer ac.Close()
		defer dc.Close()
		aerr := handshakeSide(ac, func(fr *frameReader) error {
			_, err := acceptHandshake(fr, ac, acc, accept)
			return err
		})
		d := newPipeFrames(t, dc)
		d.send(hello)
		var reply2 messages.HandshakeReply
		if err := d.read(&reply2); err != nil {
			t.Fatal(err)
		}
		if string(reply2.Nonce) == string(reply.Nonce) {
			t.Fatal("acceptor reused its nonce")
		}
		d.send(dialerProof)
		var res messages.HandshakeResult
		if err := d.read(&res); err != nil {
			t.Fatal(err)
		}
		if res.Error == "" || len(res.Proof) != 0 {
			t.Fatalf("replayed proof: result %v", &res)
		}
		if err := <-aerr; !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("acceptor: %v, want ErrAuthFailed", err)
		}
	})

	t.Run("acceptor proof replayed to the dialer", func(t *testing.T) {
		ac, dc := net.Pipe()
		defer ac.Close()
		defer dc.Close()
		derr := handshakeSide(dc, func(fr *frameReader) error {
			_, err := dialHandshake(fr, dc, dial)
			return err
		})
		a := newPipeFrames(t, ac)
		var h messages.Handshake
		if err := a.read(&h); err != nil {
			t.Fatal(err)
		}
		a.send(&messages.HandshakeReply{Version: ProtocolVersion, Identity: acc.identity, Nonce: reply.Nonce})
		var p messages.HandshakeProof
		if err := a.read(&p); err != nil {
			t.Fatal(err)
		}
		a.send(&result)
		if err := <-derr; !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("dialer: %v, want ErrAuthFailed", err)
		}
	})
}

// A peer in the middle that relays an env's dial back to the same env's
// acceptor, mirroring its identity and nonces, gets no connection: each
// side refuses a peer that claims its own identity or nonce, before any
// proof is sent.
func TestHandshakeReflection(t *testing.T) {
	self := handshakeConfig{identity: "127.0.0.1:7077", secret: []byte("s")}

	t.Run("relay to own acceptor", func(t *testing.T) {
		dA, dM := net.Pipe() // the env's dialer and the peer in the middle
		aA, aM := net.Pipe() // the env's acceptor and the peer in the middle
		defer func() { dA.Close(); dM.Close(); aA.Close(); aM.Close() }()
		derr := handshakeSide(dA, func(fr *frameReader) error {
			_, err := dialHandshake(fr, dA, self)
			return err
		})
		aerr := handshakeSide(aA, func(fr *frameReader) error {
			_, err := acceptHandshake(fr, aA, self, accept)
			return err
		})
		fromDialer, toAcceptor := newPipeFrames(t, dM), newPipeFrames(t, aM)
		var hello messages.Handshake
		if err := fromDialer.read(&hello); err != nil {
			t.Fatal(err)
		}
		toAcceptor.send(&hello) // the env's own hello, to itself
		var reply messages.HandshakeReply
		if err := toAcceptor.read(&reply); err != nil {
			t.Fatal(err)
		}
		if reply.Error == "" || len(reply.Nonce) != 0 {
			t.Fatalf("acceptor answered its own hello: %v", &reply)
		}
		if err := <-aerr; !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("acceptor: %v, want ErrAuthFailed", err)
		}
		dM.Close()
		<-derr
	})

	for name, reply := range map[string]func(hello *messages.Handshake) *messages.HandshakeReply{
		"own identity": func(*messages.Handshake) *messages.HandshakeReply {
			return &messages.HandshakeReply{Version: ProtocolVersion, Identity: self.identity, Nonce: newNonce()}
		},
		"own nonce": func(h *messages.Handshake) *messages.HandshakeReply {
			return &messages.HandshakeReply{Version: ProtocolVersion, Identity: "127.0.0.1:1", Nonce: h.Nonce}
		},
	} {
		t.Run("dialer refuses "+name, func(t *testing.T) {
			dA, dM := net.Pipe()
			defer dA.Close()
			defer dM.Close()
			derr := handshakeSide(dA, func(fr *frameReader) error {
				_, err := dialHandshake(fr, dA, self)
				return err
			})
			m := newPipeFrames(t, dM)
			var hello messages.Handshake
			if err := m.read(&hello); err != nil {
				t.Fatal(err)
			}
			m.send(reply(&hello))
			var p messages.HandshakeProof
			if err := m.read(&p); err == nil {
				t.Fatalf("dialer sent its proof to a reflecting peer: %x", p.Proof)
			}
			if err := <-derr; !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("dialer: %v, want ErrAuthFailed", err)
			}
		})
	}
}

// The acceptor sends nothing derived from the secret to a dialer that has
// not proved it: no proof in its reply, none with a refusal.
func TestAcceptorProvesLast(t *testing.T) {
	acc := handshakeConfig{identity: "127.0.0.1:7077", secret: []byte("s")}
	ac, dc := net.Pipe()
	defer ac.Close()
	defer dc.Close()
	aerr := handshakeSide(ac, func(fr *frameReader) error {
		_, err := acceptHandshake(fr, ac, acc, accept)
		return err
	})
	d := newPipeFrames(t, dc)
	d.send(&messages.Handshake{Version: ProtocolVersion, Identity: "127.0.0.1:1", Nonce: newNonce()})
	var reply messages.HandshakeReply
	if err := d.read(&reply); err != nil {
		t.Fatal(err)
	}
	if len(reply.Proof) != 0 || len(reply.Nonce) != nonceLen {
		t.Fatalf("reply to an unproven dialer: %v", &reply)
	}
	d.send(&messages.HandshakeProof{Proof: make([]byte, 32)})
	var res messages.HandshakeResult
	if err := d.read(&res); err != nil {
		t.Fatal(err)
	}
	if res.Error != reasonAuth || len(res.Proof) != 0 {
		t.Fatalf("result for a wrong proof: %v", &res)
	}
	if err := <-aerr; !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("acceptor: %v", err)
	}
}

// An acceptor resolves the dialer's key id to the secret the dialer must
// prove: the default secret for the empty id, WithAuthKeys' for another;
// an unknown id fails like a wrong secret, and the acceptor learns the id.
func TestHandshakeKeyIDs(t *testing.T) {
	keys := func(id string) ([]byte, bool) {
		if id == "app-1" {
			return []byte("app secret"), true
		}
		if id == "empty" {
			return nil, true
		}
		return nil, false
	}
	acc := handshakeConfig{identity: "127.0.0.1:7077", secret: []byte("cluster"), authKeys: keys}
	client := func(secret, keyID string) handshakeConfig {
		c := testClient("client-1")
		c.secret, c.keyID = []byte(secret), keyID
		return c
	}
	for _, tc := range []struct {
		name     string
		dialer   handshakeConfig
		acceptor handshakeConfig
		err      error
	}{
		{"default secret", client("cluster", ""), acc, nil},
		{"scoped secret", client("app secret", "app-1"), acc, nil},
		{"scoped id with the default secret", client("cluster", "app-1"), acc, ErrAuthFailed},
		{"default id with the scoped secret", client("app secret", ""), acc, ErrAuthFailed},
		{"unknown id", client("cluster", "app-2"), acc, ErrAuthFailed},
		{"id resolved to no secret", client("", "empty"), acc, ErrAuthFailed},
		{"id without WithAuthKeys", client("app secret", "app-1"), handshakeConfig{identity: acc.identity, secret: acc.secret}, ErrAuthFailed},
		{"id too long", client("cluster", string(make([]byte, 256))), acc, ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ares, derr, aerr := runHandshake(t, tc.dialer, tc.acceptor, accept)
			if !errors.Is(derr, tc.err) || (tc.err == nil) != (derr == nil) {
				t.Errorf("dialer: err = %v, want %v", derr, tc.err)
			}
			if !errors.Is(aerr, tc.err) || (tc.err == nil) != (aerr == nil) {
				t.Errorf("acceptor: err = %v, want %v", aerr, tc.err)
			}
			if aerr == nil && ares.keyID != tc.dialer.keyID {
				t.Errorf("acceptor learnt key id %q, want %q", ares.keyID, tc.dialer.keyID)
			}
		})
	}
}

// The refusal of an unknown key id reads exactly as that of a wrong secret:
// a dialer cannot probe which ids an acceptor knows.
func TestUnknownKeyIDGivesNoHint(t *testing.T) {
	acc := handshakeConfig{identity: "127.0.0.1:7077", secret: []byte("cluster"),
		authKeys: func(id string) ([]byte, bool) { return []byte("app"), id == "app-1" }}
	results := map[string]*messages.HandshakeResult{}
	for _, keyID := range []string{"app-1", "app-2"} {
		ac, dc := net.Pipe()
		aerr := handshakeSide(ac, func(fr *frameReader) error {
			_, err := acceptHandshake(fr, ac, acc, accept)
			return err
		})
		d := newPipeFrames(t, dc)
		hello := &messages.Handshake{Version: ProtocolVersion, Identity: "127.0.0.1:1", Nonce: newNonce(), KeyId: keyID}
		d.send(hello)
		var reply messages.HandshakeReply
		if err := d.read(&reply); err != nil {
			t.Fatal(err)
		}
		if reply.Error != "" || len(reply.Nonce) != nonceLen || len(reply.Proof) != 0 {
			t.Fatalf("key id %s: reply %v", keyID, &reply)
		}
		d.send(&messages.HandshakeProof{Proof: proof([]byte("wrong"), labelDialer, hello.Nonce, reply.Nonce, hello.Identity, reply.Identity, keyID)})
		var res messages.HandshakeResult
		if err := d.read(&res); err != nil {
			t.Fatal(err)
		}
		results[keyID] = &res
		if err := <-aerr; !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("key id %s: acceptor %v", keyID, err)
		}
		ac.Close()
		dc.Close()
	}
	if !proto.Equal(results["app-1"], results["app-2"]) || results["app-1"].Error != reasonAuth {
		t.Fatalf("known id refused with %v, unknown with %v", results["app-1"], results["app-2"])
	}
}

// A client-mode dialer gets in only under the identity its key derives, and
// only with a signature of that key over the acceptor's fresh nonce: a
// peer that knows a client's identity and public key, or has a key of its
// own, cannot claim the client's identity.
func TestClientMustProveItsKey(t *testing.T) {
	acc := handshakeConfig{identity: "127.0.0.1:7077"}
	victim, other := testClient("victim"), testClient("other")
	for _, secret := range []string{"", "s"} {
		acc.secret = nil
		if secret != "" {
			acc.secret = []byte(secret)
		}
		t.Run("secret="+secret, func(t *testing.T) {
			ok := victim
			ok.secret = acc.secret
			if _, ares, derr, aerr := runHandshake(t, ok, acc, accept); derr != nil || aerr != nil || ares.identity != victim.identity {
				t.Fatalf("the client itself: %v, %v, %+v", derr, aerr, ares)
			}
			// Another key under the victim's identity.
			impostor := other
			impostor.identity, impostor.secret = victim.identity, acc.secret
			if _, _, derr, aerr := runHandshake(t, impostor, acc, accept); !errors.Is(derr, ErrAuthFailed) || !errors.Is(aerr, ErrAuthFailed) {
				t.Fatalf("another key: dialer %v, acceptor %v; want ErrAuthFailed", derr, aerr)
			}
			// The victim's public key without its private key: played by
			// hand, with the signature of another key.
			ac, dc := net.Pipe()
			defer ac.Close()
			defer dc.Close()
			aerr := handshakeSide(ac, func(fr *frameReader) error {
				_, err := acceptHandshake(fr, ac, acc, accept)
				return err
			})
			d := newPipeFrames(t, dc)
			hello := &messages.Handshake{Version: ProtocolVersion, Identity: victim.identity, ClientMode: true,
				PublicKey: victim.clientKey.Public().(ed25519.PublicKey)}
			if acc.secret != nil {
				hello.Nonce = newNonce()
			}
			d.send(hello)
			var reply messages.HandshakeReply
			if err := d.read(&reply); err != nil || reply.Error != "" || len(reply.Nonce) != nonceLen {
				t.Fatalf("reply %v, %v", &reply, err)
			}
			p := &messages.HandshakeProof{Signature: ed25519.Sign(other.clientKey, transcript(labelClient, hello.Nonce, reply.Nonce, victim.identity, reply.Identity, ""))}
			if acc.secret != nil {
				p.Proof = proof(acc.secret, labelDialer, hello.Nonce, reply.Nonce, victim.identity, reply.Identity, "")
			}
			d.send(p)
			var res messages.HandshakeResult
			if err := d.read(&res); err != nil || res.Error != reasonAuth || len(res.Proof) != 0 {
				t.Fatalf("result %v, %v", &res, err)
			}
			if err := <-aerr; !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("acceptor: %v", err)
			}
		})
	}
}

// A dialer with TLS on at a listener with TLS off: its ClientHello's first
// bytes read as the length prefix of a frame of some 370 MB. The listener
// says what happened instead of naming spark.rpc.message.maxSize.
func TestTLSHelloAtAPlainListenerIsNamed(t *testing.T) {
	hello := []byte{0x16, 0x03, 0x01, 0x05, 0xfa, 0x01, 0x00}
	c := &rw{Reader: bytes.NewReader(hello)}
	_, err := acceptHandshake(newFrameReader(c, 4096), c, handshakeConfig{identity: "127.0.0.1:1"}, func(handshakeResult) error { return nil })
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "the peer speaks TLS, and TLS is off here (spark.ssl.rpc.enabled)") {
		t.Fatalf("acceptHandshake of a TLS hello: %v", err)
	}
}
