package webui

// This file holds secret verifiers: what a UI needs to accept a secret it
// must not hold. A driver on a cluster holds its application's own secret,
// which no user is shown; its UI also accepts the secret of the user who
// submitted it (the cluster's, which authenticates resource managers and
// node managers) through a verifier of that secret, which cannot stand in
// for the secret anywhere.

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/sparkrpc/sparkrpc/actor"
)

// KeyUISecretVerifier is the verifier (made by NewSecretVerifier) of a
// second secret the driver's UI accepts besides spark.authenticate's. A
// cluster's submit client sets it to its user's secret's; its name matches
// spark.redaction.regex, so the environment page does not show it.
const KeyUISecretVerifier = "spark.sparkrpc.ui.secretVerifier"

// verifierScheme names the derivation of a verifier: PBKDF2 with
// HMAC-SHA-256, verifierIterations rounds, a 16-byte random salt and a
// 32-byte key.
const (
	verifierScheme     = "pbkdf2-sha256"
	verifierIterations = 100_000
	verifierSaltLen    = 16
	verifierKeyLen     = 32
	// maxVerifierIterations bounds the rounds a verifier may ask for, so a
	// bad conf cannot make each request cost seconds.
	maxVerifierIterations = 10_000_000
)

// NewSecretVerifier returns a verifier of secret for KeyUISecretVerifier
// (or WithSecretVerifier): "pbkdf2-sha256$ROUNDS$SALT$KEY", the salt random.
// A verifier proves a secret offered to the UI, and gives no more: one who
// reads it must guess the secret and pay 100,000 rounds of HMAC-SHA-256 a
// guess, which a random secret (32 bytes, as sparkrpc generates) makes
// hopeless and a short password does not.
func NewSecretVerifier(secret []byte) (string, error) {
	salt := make([]byte, verifierSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha256.New, string(secret), salt, verifierIterations, verifierKeyLen)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return verifierScheme + "$" + strconv.Itoa(verifierIterations) + "$" + enc.EncodeToString(salt) + "$" + enc.EncodeToString(key), nil
}

// verifier checks offered secrets against a verifier. A successful check
// is remembered (as the SHA-256 of what was offered), so that a browser,
// which sends its credentials with every request, pays the derivation
// once; derivations run one at a time, so that wrong guesses cost a remote
// client one core at most.
type verifier struct {
	rounds    int
	salt, key []byte

	derive sync.Mutex // one derivation at a time
	mu     sync.Mutex
	good   [][sha256.Size]byte // digests of offers that matched
}

// maxRemembered bounds the remembered good offers (there is one secret:
// more than one digest only if the verifier was made of several).
const maxRemembered = 4

// parseVerifier parses a verifier made by NewSecretVerifier.
func parseVerifier(s string) (*verifier, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 4 || parts[0] != verifierScheme {
		return nil, fmt.Errorf("%w: %s is not a secret verifier (%s$ROUNDS$SALT$KEY)", ErrInvalidConfig, KeyUISecretVerifier, verifierScheme)
	}
	rounds, err := strconv.Atoi(parts[1])
	if err != nil || rounds < 1 || rounds > maxVerifierIterations {
		return nil, fmt.Errorf("%w: %s: rounds must be 1 to %d", ErrInvalidConfig, KeyUISecretVerifier, maxVerifierIterations)
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[2])
	key, err2 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(salt) == 0 || len(key) != verifierKeyLen {
		return nil, fmt.Errorf("%w: %s: salt or key is not valid base64 of the right length", ErrInvalidConfig, KeyUISecretVerifier)
	}
	return &verifier{rounds: rounds, salt: salt, key: key}, nil
}

// matches reports whether offered is the secret the verifier was made of.
func (v *verifier) matches(offered string) bool {
	sum := sha256.Sum256([]byte(offered))
	v.mu.Lock()
	known := false
	for i := range v.good {
		known = subtle.ConstantTimeCompare(v.good[i][:], sum[:]) == 1 || known
	}
	v.mu.Unlock()
	if known {
		return true
	}
	v.derive.Lock()
	key, err := pbkdf2.Key(sha256.New, offered, v.salt, v.rounds, len(v.key))
	v.derive.Unlock()
	if err != nil || subtle.ConstantTimeCompare(key, v.key) != 1 {
		return false
	}
	v.mu.Lock()
	if len(v.good) < maxRemembered {
		v.good = append(v.good, sum)
	}
	v.mu.Unlock()
	return true
}

// WithSecretVerifier makes a UI that requires a secret (WithSecret) accept
// also the secret verifier v was made of (NewSecretVerifier). An invalid v
// accepts nothing more (SecretVerifierFromConf checks it).
func WithSecretVerifier(v string) Option {
	return optionFunc(func(o *options) { o.verifier = v })
}

// SecretVerifierFromConf returns conf's KeyUISecretVerifier ("" when not
// set), checked.
func SecretVerifierFromConf(conf *actor.Conf) (string, error) {
	s := conf.Get(KeyUISecretVerifier, "")
	if s == "" {
		return "", nil
	}
	if _, err := parseVerifier(s); err != nil {
		return "", err
	}
	return s, nil
}
