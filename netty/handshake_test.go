package netty

import (
	"errors"
	"net"
	"testing"
	"time"
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

func TestHandshake(t *testing.T) {
	server := handshakeConfig{identity: "127.0.0.1:7077"}
	client := handshakeConfig{identity: "client-1", clientMode: true}
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

// The proof binds the label, both nonces and both identities.
func TestProofBindsEverything(t *testing.T) {
	s := []byte("secret")
	n1, n2 := newNonce(), newNonce()
	base := proof(s, labelDialer, n1, n2, "a", "b")
	for name, other := range map[string][]byte{
		"label":    proof(s, labelAcceptor, n1, n2, "a", "b"),
		"nonces":   proof(s, labelDialer, n2, n1, "a", "b"),
		"ids":      proof(s, labelDialer, n1, n2, "b", "a"),
		"boundary": proof(s, labelDialer, n1, n2, "ab", ""),
		"secret":   proof([]byte("other"), labelDialer, n1, n2, "a", "b"),
	} {
		if string(other) == string(base) {
			t.Errorf("%s does not change the proof", name)
		}
	}
}
