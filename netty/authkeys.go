// Scoped secrets: the key id a dialer authenticates with, and how an acceptor resolves it.

package netty

import (
	"fmt"
	"unicode/utf8"

	"github.com/sparkrpc/sparkrpc/actor"
)

// validKeyID checks a key id from a peer or the conf: at most 255 bytes of
// UTF-8.
func validKeyID(id string) error {
	if len(id) > maxKeyIDLen || !utf8.ValidString(id) {
		return fmt.Errorf("%w: bad key id (%d bytes)", ErrProtocol, len(id))
	}
	return nil
}

// resolveKey returns the secret that keyID names on an acceptor with
// authentication on: its default secret for the empty id, else what
// WithAuthKeys resolves. For an id it does not know it returns a random
// secret and false, so that the caller runs the same checks as for a wrong
// secret.
func (cfg *handshakeConfig) resolveKey(keyID string) (secret []byte, known bool) {
	if keyID == "" {
		return cfg.secret, true
	}
	if cfg.authKeys != nil {
		if s, ok := cfg.authKeys(keyID); ok && len(s) > 0 {
			return s, true
		}
	}
	return newNonce(), false
}

// readKeyID reads KeyAuthenticateKeyID: the key id this env presents when
// it dials with authentication on.
func readKeyID(conf *actor.Conf) (string, error) {
	id, _ := conf.Lookup(KeyAuthenticateKeyID)
	if err := validKeyID(id); err != nil {
		return "", &actor.ConfError{Key: KeyAuthenticateKeyID, Value: id, Err: fmt.Errorf("must be at most %d bytes of UTF-8", maxKeyIDLen)}
	}
	return id, nil
}

// PeerKeyID returns the key id that the live connection with a peer
// authenticated with: the id the peer presented for an inbound connection,
// the id this env presented (spark.authenticate.keyId) for one it dialled;
// empty for the default secret and when authentication is off. ok is false
// when there is no live connection with the peer. who is the peer's
// identity (a sender PID's Address) or what ctx.SenderAddress().HostPort()
// returns: a listening peer's address, or a client-mode peer's socket
// address.
func (t *Transport) PeerKeyID(who string) (keyID string, ok bool) {
	if v, found := t.peers.Load(who); found {
		if id, ok := v.(*peer).liveKeyID(); ok {
			return id, true
		}
	}
	if !isListenIdentity(who) {
		return "", false
	}
	// A client-mode peer's socket address.
	t.peers.Range(func(_, v any) bool {
		p := v.(*peer)
		if !p.client {
			return true
		}
		p.mu.Lock()
		match := p.conn != nil && p.sockAddr.HostPort() == who
		if match {
			keyID = p.conn.keyID
		}
		p.mu.Unlock()
		ok = match
		return !match
	})
	return keyID, ok
}

// liveKeyID returns the key id of p's live connection.
func (p *peer) liveKeyID() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return "", false
	}
	return p.conn.keyID, true
}
