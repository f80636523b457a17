package netty

import (
	"crypto/ed25519"
	"time"
)

// WithInlineQuiet sets how long a connection must have had no write for a
// Send to write an ask or a reply itself: 0 makes every lone ask or reply
// try it.
func WithInlineQuiet(d time.Duration) Option {
	return optionFunc(func(o *options) { o.inlineQuiet = &d })
}

// ClientIdentity is the identity of the client-mode peer whose key is pub.
func ClientIdentity(pub ed25519.PublicKey) string { return clientIdentity(pub) }

// ClientTranscript is what a client-mode dialer signs in the handshake,
// with authentication off.
func ClientTranscript(acceptorNonce []byte, clientID, acceptorID string) []byte {
	return transcript(labelClient, nil, acceptorNonce, clientID, acceptorID, "")
}
