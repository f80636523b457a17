package webui_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/webui"
)

// With a secret, every page, API route and /metrics needs it as a bearer
// token; without one, nothing does.
func TestAuth(t *testing.T) {
	c := startCluster(t, 1, 1)
	on := newDriverUI(t, c, webui.WithSecret("s3cret"))
	off := newDriverUI(t, c)
	paths := []string{"/jobs/", "/executors/", "/endpoints/", "/api/v1/applications", "/api/v1/applications/" + testApp + "/jobs", "/metrics"}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			for _, token := range []string{"", "wrong", "s3cre", "s3cret2"} {
				code, body := get(t, on+p, token)
				if code != http.StatusUnauthorized || !strings.Contains(body, "spark.authenticate") || !strings.Contains(body, "Authorization: Bearer") {
					t.Fatalf("token %q: %d %q; want 401 naming spark.authenticate and the header", token, code, body)
				}
				if strings.HasPrefix(p, "/api/") && !strings.HasPrefix(body, `{"error":`) {
					t.Fatalf("token %q: API 401 body %q is not a JSON error", token, body)
				}
			}
			want := http.StatusOK
			if p == "/metrics" {
				want = http.StatusNotFound // no metrics handler: past the check
			}
			if code, body := get(t, on+p, "s3cret"); code != want {
				t.Fatalf("with the secret: %d %q, want %d", code, body, want)
			}
			if code, body := get(t, off+p, ""); code != want {
				t.Fatalf("auth off: %d %q, want %d", code, body, want)
			}
		})
	}
}

func TestSecretFromConf(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want string
		err  error
	}{
		{"off", nil, "", nil},
		{"off with a secret", []string{webui.KeyAuthenticateSecret, "x"}, "", nil},
		{"on", []string{webui.KeyAuthenticate, "true", webui.KeyAuthenticateSecret, "x"}, "x", nil},
		{"on without a secret", []string{webui.KeyAuthenticate, "true"}, "", webui.ErrNoSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			for i := 0; i < len(tc.kv); i += 2 {
				conf.Set(tc.kv[i], tc.kv[i+1])
			}
			got, err := webui.SecretFromConf(conf)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("SecretFromConf = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
