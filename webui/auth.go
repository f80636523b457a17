package webui

// This file holds the UI's authentication: with spark.authenticate on,
// every page and API call needs the shared secret, sent by a script as a
// bearer token or by a browser as the password of HTTP Basic.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// SecretFromConf returns the secret the UI must require: "" when
// spark.authenticate is off, else spark.authenticate.secret or the contents
// of spark.authenticate.secret.file (an error wrapping ErrNoSecret when
// neither is set).
func SecretFromConf(conf *actor.Conf) (string, error) {
	secret, err := netty.AuthSecret(conf)
	if errors.Is(err, netty.ErrNoSecret) {
		return "", ErrNoSecret
	}
	return string(secret), err
}

// Realm is the realm of the UI's HTTP authentication challenges.
const Realm = "sparkrpc"

// MaxUserNameLength bounds the user name of HTTP Basic credentials, in bytes.
const MaxUserNameLength = 256

// failureLogInterval is the least time between two log lines about
// refused credentials.
const failureLogInterval = time.Minute

// unauthorizedText is the body of a 401: what is missing and how to send it.
const unauthorizedText = "401 Unauthorized: spark.authenticate is on, so this UI requires the shared secret " +
	"(spark.authenticate.secret). A browser asks for it: any user name, the secret as the password (HTTP Basic). " +
	"Scripts send the header 'Authorization: Bearer SECRET'. The secret is never taken from the URL."

// userKey is the request context's key of the authenticated user.
type userKey struct{}

// authUser is what an authenticated request's context holds.
type authUser struct{ name string }

// User returns the user name that the request whose context is ctx
// authenticated as, and whether it authenticated at all: the user name of
// its HTTP Basic credentials, or "" for a bearer token. With
// spark.authenticate off, ok is false. The name is claimed, not proven:
// whoever knows the shared secret may send any name (as in Spark without
// Kerberos or an authentication filter), so access control keyed on it
// (spark.ui.view.acls) holds only among holders of the secret.
func User(ctx context.Context) (name string, ok bool) {
	u, ok := ctx.Value(userKey{}).(authUser)
	return u.name, ok
}

// authenticator checks a request's credentials against the secret and
// logs refused credentials at most once per failureLogInterval.
type authenticator struct {
	sum [sha256.Size]byte // of the secret: compared in constant time, whatever the length offered
	alt *verifier         // of a second secret (WithSecretVerifier), or nil
	log zerolog.Logger
	now func() time.Time

	mu       sync.Mutex
	lastLog  time.Time
	failures int // refused credentials not yet logged
}

func newAuthenticator(secret, verifier string, log zerolog.Logger, now func() time.Time) *authenticator {
	a := &authenticator{sum: sha256.Sum256([]byte(secret)), log: log, now: now}
	if verifier != "" {
		a.alt, _ = parseVerifier(verifier) // invalid: nothing more is accepted
	}
	return a
}

// matches reports, in time independent of the secret and of offered,
// whether offered is the secret, or the secret of the verifier.
func (a *authenticator) matches(offered string) bool {
	got := sha256.Sum256([]byte(offered))
	if subtle.ConstantTimeCompare(got[:], a.sum[:]) == 1 {
		return true
	}
	return a.alt != nil && a.alt.matches(offered)
}

// check returns the request's user and true when its Authorization header
// carries the secret: "Bearer SECRET" (user "") or Basic with any valid
// user name and the secret as the password. offered is false when the
// request carried no credentials at all (a browser's first request).
func (a *authenticator) check(r *http.Request) (user string, ok, offered bool) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		return "", false, false
	}
	if len(h) > 1 {
		return "", false, true
	}
	scheme, cred, _ := strings.Cut(h[0], " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return "", a.matches(cred), true
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		if err != nil {
			return "", false, true
		}
		name, password, found := strings.Cut(string(raw), ":")
		good := a.matches(password)
		if !found || !validUserName(name) || !good {
			return "", false, true
		}
		return name, true, true
	}
	return "", false, true
}

// validUserName reports whether name may be recorded as a user: valid
// UTF-8, at most MaxUserNameLength bytes, without control characters.
func validUserName(name string) bool {
	if len(name) > MaxUserNameLength || !utf8.ValidString(name) {
		return false
	}
	for _, c := range name {
		if unicode.IsControl(c) {
			return false
		}
	}
	return true
}

// refused records refused credentials and logs them, with how many were
// refused since the last line, at most once per failureLogInterval. The
// line names the client, the path and the scheme, never what was offered.
func (a *authenticator) refused(r *http.Request) {
	now := a.now()
	a.mu.Lock()
	a.failures++
	if !a.lastLog.IsZero() && now.Sub(a.lastLog) < failureLogInterval {
		a.mu.Unlock()
		return
	}
	n := a.failures
	a.failures, a.lastLog = 0, now
	a.mu.Unlock()
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"), strings.EqualFold(scheme, "Basic"):
		scheme = strings.ToLower(scheme)
	default:
		scheme = "other"
	}
	path := r.URL.Path
	if len(path) > 200 {
		path = path[:200] + "..."
	}
	a.log.Warn().Str("remote", r.RemoteAddr).Str("path", path).Str("scheme", scheme).Int("refused", n).
		Msg("web UI refused a request whose credentials do not carry the shared secret (spark.authenticate); " +
			"the count is of refusals since the last such line, logged at most once a minute")
}

// requireSecret wraps h so that a request without the secret, as a bearer
// token or as the password of HTTP Basic, gets 401 with the challenges
// `Basic realm="sparkrpc"` (a browser asks for credentials) and
// `Bearer realm="sparkrpc"`: a JSON body on /api/, an HTML page for a
// browser, text otherwise. The user of an accepted request is put in its
// context (see User). The secret of verifier (when not "") is accepted
// too. An empty secret returns h unchanged.
func requireSecret(secret, verifier string, log zerolog.Logger, now func() time.Time, h http.Handler) http.Handler {
	if secret == "" {
		return h
	}
	a := newAuthenticator(secret, verifier, log, now)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok, offered := a.check(r)
		if ok {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, authUser{name: user})))
			return
		}
		if offered {
			a.refused(r)
		}
		writeUnauthorized(w, r)
	})
}

// writeUnauthorized writes the 401 of a request without the secret, and
// closes its connection: a client without the secret holds none of the
// UI's connections (maxConnections) between its requests.
func writeUnauthorized(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	w.Header().Add("WWW-Authenticate", `Basic realm="`+Realm+`"`)
	w.Header().Add("WWW-Authenticate", `Bearer realm="`+Realm+`"`)
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/"):
		writeJSONError(w, http.StatusUnauthorized, unauthorizedText)
	case strings.Contains(r.Header.Get("Accept"), "text/html"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(unauthorizedHTML))
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(unauthorizedText + "\n"))
	}
}

// unauthorizedHTML is what a browser shows when its user cancels the
// credentials prompt.
const unauthorizedHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>401 Unauthorized — sparkrpc</title></head>
<body style="font-family:sans-serif;margin:24px">
<h1 id="unauthorized">401 Unauthorized</h1>
<p>spark.authenticate is on, so this UI requires the shared secret (spark.authenticate.secret).</p>
<p>Reload the page and, when the browser asks, give any user name and the secret as the password.</p>
<p>Scripts send the header <code>Authorization: Bearer SECRET</code>. The secret is never taken from the URL.</p>
</body></html>
`
