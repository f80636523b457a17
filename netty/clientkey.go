// Client identities: self-certifying, derived from an Ed25519 key that the client proves in the handshake.

package netty

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// clientIDPrefix starts every client-mode identity.
const clientIDPrefix = "client-"

// clientIdentity is the identity of the client whose public key is pub:
// "client-" and the hex of the first 16 bytes of SHA-256(pub). Nobody
// without the private key can complete a handshake under it.
func clientIdentity(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return clientIDPrefix + hex.EncodeToString(h[:16])
}

// newClientKey returns a fresh key for a client-mode env and the identity
// it derives.
func newClientKey() (ed25519.PrivateKey, string) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return priv, clientIdentity(pub)
}

// checkClientIdentity checks that a client-mode dialer's claimed identity is
// the one its public key derives.
func checkClientIdentity(id string, pub []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: client %s sent no valid public key (%d bytes)", ErrAuthFailed, id, len(pub))
	}
	if id != clientIdentity(pub) {
		return fmt.Errorf("%w: client identity %s is not the one its key derives", ErrAuthFailed, id)
	}
	return nil
}
