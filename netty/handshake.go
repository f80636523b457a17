// The connection handshake: identities, versions and the shared-secret proofs.

package netty

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// ProtocolVersion is the wire protocol version this package speaks. Version 2
// has the dialer prove the shared secret first (version 1 had the acceptor
// send its proof to anyone who connected); version 3 has the dialer name the
// secret it proves (the key id, bound into both proofs); version 4 makes
// client identities self-certifying (an Ed25519 key, see clientkey.go);
// version 5 adds endpoint credit (credit.go): each side's first frame is
// its offer, and a sender keeps to the credit its peer grants per endpoint;
// version 6 charges a small frame more than its bytes against that credit
// (frameCharge), which a version 5 peer would count as a breach; version 7
// names a recurring envelope by a reference defined once per connection
// (refs.go), which a version 6 peer would not resolve.
const ProtocolVersion = 7

// Errors of the handshake and the framing.
var (
	// ErrProtocol matches every error caused by bytes from a peer that are
	// not the protocol: garbage, a malformed or oversized frame, a bad
	// handshake. The connection is closed and counted in Stats.ProtocolErrors.
	ErrProtocol = errors.New("netty: protocol error")
	// ErrAuthFailed is the error of a handshake in which either side failed
	// to prove the shared secret (spark.authenticate.secret, or the one the
	// dialer's key id names), or one side required authentication and the
	// other did not offer it.
	ErrAuthFailed = errors.New("netty: authentication failed")
	// ErrDuplicateConnection is the error of a dial that the peer refused
	// because a connection between the two already exists or is being
	// opened from the peer's side. The dialer uses that connection instead.
	ErrDuplicateConnection = errors.New("netty: duplicate connection")
	// ErrTooManyHandshakes is the error of a dial that the peer refused
	// because spark.rpc.netty.maxPendingHandshakes connections, or
	// spark.rpc.netty.maxPendingHandshakesPerAddress from the dialer's
	// address, were in handshake there already (the reason names the key).
	ErrTooManyHandshakes = errors.New("netty: too many connections in handshake")
	// ErrIdentityInUse is the error of a dial that the peer refused because
	// it has a live connection with a peer of the same listening identity
	// (see Transport: an identity cannot be taken over). The peer keeps the
	// live connection; a dialer whose old connection is dead gets in once
	// the peer has seen it close.
	ErrIdentityInUse = errors.New("netty: identity in use by a live connection")
	// ErrTooManyConnections is the error of a dial that the peer refused
	// because spark.rpc.netty.maxConnections connections, or
	// spark.rpc.netty.maxConnectionsPerAddress from the dialer's address,
	// were established there already (the reason names the key).
	ErrTooManyConnections = errors.New("netty: too many connections")
)

// VersionError is a handshake with a peer that speaks another protocol
// version than this package (ProtocolVersion): on the dialer's side too
// when the peer refused it for that, with the version the peer answered.
// It matches ErrProtocol.
type VersionError struct {
	Local, Peer uint32 // the protocol versions of this env and of the peer
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("netty: protocol version mismatch: the peer speaks protocol version %d, this env %d", e.Peer, e.Local)
}

// Is reports whether target is ErrProtocol.
func (e *VersionError) Is(target error) bool { return target == ErrProtocol }

// RefusedError is a handshake that the peer refused, with the peer's reason.
type RefusedError struct {
	Reason string
	Err    error // ErrAuthFailed, ErrDuplicateConnection, ErrTooManyHandshakes, ErrTooManyConnections, ErrIdentityInUse, ErrProtocol or a *VersionError
}

func (e *RefusedError) Error() string { return "netty: connection refused by peer: " + e.Reason }

// Unwrap returns the class of the refusal.
func (e *RefusedError) Unwrap() error { return e.Err }

const (
	nonceLen       = 32
	maxIdentityLen = 255
	maxKeyIDLen    = 255
	labelAcceptor  = "sparkrpc-acceptor"
	labelDialer    = "sparkrpc-dialer"
	labelClient    = "sparkrpc-client-key"
	reasonAuth     = "authentication failed"
	reasonAuthReq  = "authentication required"
	reasonAuthNone = "authentication not enabled"
	reasonBusy     = "too many connections in handshake"
	reasonKey      = "client identity does not match its key"
	reasonTooMany  = "too many connections"
)

// handshakeConfig is one side's part in the handshake.
type handshakeConfig struct {
	identity   string
	clientMode bool
	secret     []byte // nil: authentication off; else the default secret
	keyID      string // dialing: the id of secret ("" for the default)
	// authKeys resolves a dialer's non-empty key id when accepting (nil:
	// only the default secret is accepted).
	authKeys func(keyID string) (secret []byte, ok bool)
	// clientKey is the key a client-mode dialer's identity derives from.
	clientKey ed25519.PrivateKey
}

// handshakeResult is what a handshake learns about the peer.
type handshakeResult struct {
	identity   string
	clientMode bool
	keyID      string // the key id the connection authenticated with
}

// proof computes HMAC-SHA256(secret, label | dialer nonce | acceptor nonce |
// dialer identity | acceptor identity | key id), every field length-prefixed.
func proof(secret []byte, label string, dialerNonce, acceptorNonce []byte, dialerID, acceptorID, keyID string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(transcript(label, dialerNonce, acceptorNonce, dialerID, acceptorID, keyID))
	return m.Sum(nil)
}

// transcript is what a proof or a client's signature covers: label |
// dialer nonce | acceptor nonce | dialer identity | acceptor identity | key
// id, every field prefixed with its 4-byte big-endian length.
func transcript(label string, dialerNonce, acceptorNonce []byte, dialerID, acceptorID, keyID string) []byte {
	var b []byte
	for _, f := range [][]byte{[]byte(label), dialerNonce, acceptorNonce, []byte(dialerID), []byte(acceptorID), []byte(keyID)} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

func newNonce() []byte {
	b := make([]byte, nonceLen)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return b
}

func sendFrame(w io.Writer, msg proto.Message) error {
	b, err := appendFrame(nil, msg)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func validIdentity(id string, clientMode bool) error {
	if id == "" || len(id) > maxIdentityLen || !utf8.ValidString(id) {
		return fmt.Errorf("%w: bad identity %q", ErrProtocol, id)
	}
	if !clientMode {
		if _, err := actor.ParseHostPort(id); err != nil {
			return fmt.Errorf("%w: bad listen address %q", ErrProtocol, id)
		}
	}
	return nil
}

// dialHandshake runs the dialer's side of the handshake over fr and w. With
// authentication on, the dialer proves the secret first, over both nonces,
// and checks the acceptor's proof in its last frame. In client mode it also
// proves its key (the acceptor sends a nonce for that even with
// authentication off).
func dialHandshake(fr *frameReader, w io.Writer, cfg handshakeConfig) (handshakeResult, error) {
	hello := &messages.Handshake{Version: ProtocolVersion, Identity: cfg.identity, ClientMode: cfg.clientMode}
	if cfg.clientMode {
		hello.PublicKey = cfg.clientKey.Public().(ed25519.PublicKey)
	}
	if cfg.secret != nil {
		hello.Nonce = newNonce()
		hello.KeyId = cfg.keyID
	}
	if err := sendFrame(w, hello); err != nil {
		return handshakeResult{}, err
	}
	var reply messages.HandshakeReply
	if err := fr.readHandshake(&reply); err != nil {
		return handshakeResult{}, err
	}
	if reply.Error != "" {
		return handshakeResult{}, refusedBy(&reply)
	}
	if reply.Version != ProtocolVersion {
		return handshakeResult{}, &VersionError{Local: ProtocolVersion, Peer: reply.Version}
	}
	if err := validIdentity(reply.Identity, false); err != nil {
		return handshakeResult{}, err
	}
	res := handshakeResult{identity: reply.Identity, keyID: hello.KeyId}
	if cfg.secret == nil && !cfg.clientMode {
		if len(reply.Nonce) != 0 || len(reply.Proof) != 0 {
			return handshakeResult{}, fmt.Errorf("%w: peer authenticates but spark.authenticate is off here", ErrAuthFailed)
		}
		return res, nil
	}
	if cfg.secret != nil {
		if reply.Identity == cfg.identity {
			// Our own identity: a peer that reflects this env's frames back to it.
			return handshakeResult{}, fmt.Errorf("%w: peer claims this env's own identity %s", ErrAuthFailed, reply.Identity)
		}
		if len(reply.Nonce) != nonceLen || len(reply.Proof) != 0 {
			return handshakeResult{}, fmt.Errorf("%w: peer did not authenticate", ErrAuthFailed)
		}
		if hmac.Equal(reply.Nonce, hello.Nonce) {
			return handshakeResult{}, fmt.Errorf("%w: peer reflected this env's nonce", ErrAuthFailed)
		}
	} else if len(reply.Nonce) != nonceLen || len(reply.Proof) != 0 {
		return handshakeResult{}, fmt.Errorf("%w: peer sent no challenge for this client's key", ErrProtocol)
	}
	p := &messages.HandshakeProof{}
	if cfg.secret != nil {
		p.Proof = proof(cfg.secret, labelDialer, hello.Nonce, reply.Nonce, cfg.identity, reply.Identity, hello.KeyId)
	}
	if cfg.clientMode {
		p.Signature = ed25519.Sign(cfg.clientKey, transcript(labelClient, hello.Nonce, reply.Nonce, cfg.identity, reply.Identity, hello.KeyId))
	}
	if err := sendFrame(w, p); err != nil {
		return handshakeResult{}, err
	}
	var result messages.HandshakeResult
	if err := fr.readHandshake(&result); err != nil {
		return handshakeResult{}, err
	}
	if result.Error != "" {
		return handshakeResult{}, refused(result.Error, result.Duplicate)
	}
	if cfg.secret == nil {
		if len(result.Proof) != 0 {
			return handshakeResult{}, fmt.Errorf("%w: peer authenticates but spark.authenticate is off here", ErrAuthFailed)
		}
		return res, nil
	}
	want := proof(cfg.secret, labelAcceptor, hello.Nonce, reply.Nonce, cfg.identity, reply.Identity, hello.KeyId)
	if !hmac.Equal(want, result.Proof) {
		return handshakeResult{}, fmt.Errorf("%w: peer does not know the secret", ErrAuthFailed)
	}
	return res, nil
}

// refusedBy is the error of a handshake reply that refused the dialer.
func refusedBy(reply *messages.HandshakeReply) *RefusedError {
	r := refused(reply.Error, reply.Duplicate)
	if r.Err == ErrProtocol && reply.Version != 0 && reply.Version != ProtocolVersion {
		// Refused by a peer of another version, whose reason may name
		// only this env's version: say which the peer speaks.
		r.Err = &VersionError{Local: ProtocolVersion, Peer: reply.Version}
		r.Reason += fmt.Sprintf(" (the peer speaks protocol version %d, this env %d)", reply.Version, ProtocolVersion)
	}
	return r
}

func refused(reason string, duplicate bool) *RefusedError {
	var class error
	switch {
	case duplicate:
		class = ErrDuplicateConnection
	case reason == reasonAuth || reason == reasonAuthReq || reason == reasonAuthNone || reason == reasonKey:
		class = ErrAuthFailed
	case reason == ErrIdentityInUse.Error():
		class = ErrIdentityInUse
	case strings.HasPrefix(reason, reasonBusy):
		class = ErrTooManyHandshakes
	case strings.HasPrefix(reason, reasonTooMany):
		class = ErrTooManyConnections
	default:
		class = ErrProtocol
	}
	return &RefusedError{Reason: reason, Err: class}
}

// acceptVerdict decides, once the dialer has proved itself, whether the
// connection is kept: nil accepts, ErrDuplicateConnection refuses it as a
// duplicate, any other error refuses it with that text. It is called just
// before the acceptor's last handshake frame is written.
type acceptVerdict func(peer handshakeResult) error

// checkHello checks a dialer's first frame before anything is answered: its
// protocol version, identity and key id, and that only a client-mode dialer
// sends a key (whose identity must derive from it). On failure it returns
// the reason to tell the dialer.
func checkHello(hello *messages.Handshake) (reason string, err error) {
	if hello.Version != ProtocolVersion {
		// The reason is all a peer of another version shows: name both.
		return fmt.Sprintf("unsupported protocol version %d: this peer speaks protocol version %d", hello.Version, ProtocolVersion),
			&VersionError{Local: ProtocolVersion, Peer: hello.Version}
	}
	if err := validIdentity(hello.Identity, hello.ClientMode); err != nil {
		return "bad identity", err
	}
	if err := validKeyID(hello.KeyId); err != nil {
		return "bad key id", err
	}
	if hello.ClientMode {
		if err := checkClientIdentity(hello.Identity, hello.PublicKey); err != nil {
			return reasonKey, err
		}
	} else if len(hello.PublicKey) != 0 {
		return "bad identity", fmt.Errorf("%w: a listening peer sent a client key", ErrProtocol)
	}
	return "", nil
}

// checkDialerProof checks the dialer's proof frame p against the acceptor's
// nonce: with authentication on, its proof of secret (the secret of its key
// id, known says whether that id resolved); off, that it proves nothing;
// and a client-mode dialer's signature by the key its identity derives
// from (a listening dialer must send none).
func checkDialerProof(cfg handshakeConfig, hello *messages.Handshake, nonce, secret []byte, known bool, p *messages.HandshakeProof) error {
	if cfg.secret != nil {
		want := proof(secret, labelDialer, hello.Nonce, nonce, hello.Identity, cfg.identity, hello.KeyId)
		if !known {
			return fmt.Errorf("%w: peer %s authenticates with unknown key id %q", ErrAuthFailed, hello.Identity, hello.KeyId)
		}
		if !hmac.Equal(want, p.Proof) {
			return fmt.Errorf("%w: peer %s does not know the secret of key id %q", ErrAuthFailed, hello.Identity, hello.KeyId)
		}
	} else if len(p.Proof) != 0 {
		return fmt.Errorf("%w: peer authenticates but spark.authenticate is off here", ErrAuthFailed)
	}
	if hello.ClientMode {
		signed := transcript(labelClient, hello.Nonce, nonce, hello.Identity, cfg.identity, hello.KeyId)
		if !ed25519.Verify(ed25519.PublicKey(hello.PublicKey), signed, p.Signature) {
			return fmt.Errorf("%w: peer does not hold the key of client identity %s", ErrAuthFailed, hello.Identity)
		}
	} else if len(p.Signature) != 0 {
		return fmt.Errorf("%w: a listening peer sent a client signature", ErrProtocol)
	}
	return nil
}

// acceptHandshake runs the acceptor's side of the handshake over fr and w.
// With authentication on, it sends nothing derived from the secret until the
// dialer has proved it: its reply carries only its nonce, and its proof goes
// out in its last frame, after the dialer's proof checked out. A client-mode
// dialer must also prove the key its identity derives from.
func acceptHandshake(fr *frameReader, w io.Writer, cfg handshakeConfig, verdict acceptVerdict) (handshakeResult, error) {
	var hello messages.Handshake
	if err := fr.readHandshake(&hello); err != nil {
		return handshakeResult{}, tlsHello(err)
	}
	refuse := func(reason string, dup bool, err error) (handshakeResult, error) {
		sendFrame(w, &messages.HandshakeReply{Version: ProtocolVersion, Identity: cfg.identity, Error: reason, Duplicate: dup}) //nolint:errcheck // closing anyway
		return handshakeResult{}, err
	}
	if reason, err := checkHello(&hello); err != nil {
		return refuse(reason, false, err)
	}
	peer := handshakeResult{identity: hello.Identity, clientMode: hello.ClientMode, keyID: hello.KeyId}
	secret, known := cfg.secret, true
	if cfg.secret == nil {
		if len(hello.Nonce) != 0 || hello.KeyId != "" {
			return refuse(reasonAuthNone, false, fmt.Errorf("%w: peer authenticates but spark.authenticate is off here", ErrAuthFailed))
		}
		if !hello.ClientMode {
			if err := verdict(peer); err != nil {
				return refuse(err.Error(), errors.Is(err, ErrDuplicateConnection), err)
			}
			if err := sendFrame(w, &messages.HandshakeReply{Version: ProtocolVersion, Identity: cfg.identity}); err != nil {
				return handshakeResult{}, err
			}
			return peer, nil
		}
	} else {
		if len(hello.Nonce) != nonceLen {
			return refuse(reasonAuthReq, false, fmt.Errorf("%w: peer did not authenticate", ErrAuthFailed))
		}
		if hello.Identity == cfg.identity {
			// Our own identity: frames of this env reflected back to it.
			return refuse(reasonAuth, false, fmt.Errorf("%w: peer claims this env's own identity %s", ErrAuthFailed, hello.Identity))
		}
		// An unknown key id goes through the same exchange as a wrong
		// secret, and fails the same way: the dialer learns nothing about
		// which ids exist.
		secret, known = cfg.resolveKey(hello.KeyId)
	}
	nonce := newNonce()
	if err := sendFrame(w, &messages.HandshakeReply{Version: ProtocolVersion, Identity: cfg.identity, Nonce: nonce}); err != nil {
		return handshakeResult{}, err
	}
	var p messages.HandshakeProof
	if err := fr.readHandshake(&p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			// The dialer hung up instead of proving the secret or its key.
			return handshakeResult{}, fmt.Errorf("%w: peer closed the connection during authentication", ErrAuthFailed)
		}
		return handshakeResult{}, err
	}
	fail := func(err error) (handshakeResult, error) {
		sendFrame(w, &messages.HandshakeResult{Error: reasonAuth}) //nolint:errcheck // closing anyway
		return handshakeResult{}, err
	}
	if err := checkDialerProof(cfg, &hello, nonce, secret, known, &p); err != nil {
		return fail(err)
	}
	if err := verdict(peer); err != nil {
		// Refused after authentication: the dialer learns why from the text.
		sendFrame(w, &messages.HandshakeResult{Error: err.Error(), Duplicate: errors.Is(err, ErrDuplicateConnection)}) //nolint:errcheck // closing anyway
		return handshakeResult{}, err
	}
	result := &messages.HandshakeResult{}
	if cfg.secret != nil {
		result.Proof = proof(secret, labelAcceptor, hello.Nonce, nonce, hello.Identity, cfg.identity, hello.KeyId)
	}
	if err := sendFrame(w, result); err != nil {
		return handshakeResult{}, err
	}
	return peer, nil
}

// tlsHello returns err, the failure to read a dialer's hello, or, when the
// hello's length prefix is the start of a TLS record (a dialer with TLS on
// at a listener with TLS off, whose first bytes read as a frame of some
// 370 MB), an error that says so.
func tlsHello(err error) error {
	var tooLarge *FrameTooLargeError
	if errors.As(err, &tooLarge) && tooLarge.Size>>16 == 0x1603 {
		return fmt.Errorf("%w: the peer speaks TLS, and TLS is off here (%s)", ErrProtocol, KeySSLEnabled)
	}
	return err
}

// readHandshake is readMessage for a frame of the handshake: a frame over
// the handshake's bound is marked as such (FrameTooLargeError.Handshake).
func (fr *frameReader) readHandshake(msg proto.Message) error {
	err := fr.readMessage(msg)
	var tooLarge *FrameTooLargeError
	if errors.As(err, &tooLarge) {
		tooLarge.Handshake = true
	}
	return err
}
