package webui

// This file holds the UI's authentication: with spark.authenticate on,
// every page and API call needs the shared secret as a bearer token.

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

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

// unauthorizedText is the body of a 401: what is missing and how to send it.
const unauthorizedText = "401 Unauthorized: spark.authenticate is on, so this UI requires the shared secret " +
	"(spark.authenticate.secret) as a bearer token: send the header 'Authorization: Bearer SECRET'."

// requireSecret wraps h so that a request without "Authorization: Bearer
// secret" gets 401 (a JSON body on /api/, text elsewhere). An empty secret
// returns h unchanged.
func requireSecret(secret string, h http.Handler) http.Handler {
	if secret == "" {
		return h
	}
	want := []byte("Bearer " + secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="sparkrpc"`)
		if strings.HasPrefix(r.URL.Path, "/api/") {
			writeJSONError(w, http.StatusUnauthorized, unauthorizedText)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(unauthorizedText + "\n"))
	})
}
