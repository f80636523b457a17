package webui_test

import (
	"encoding/base64"
	"errors"
	"html"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
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

// do sends a GET for url with the given headers (name, value, ...) and
// returns the response, its body read.
func do(t *testing.T, url string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// newNodeUI serves a node manager's UI with opts: the UI that needs no
// cluster.
func newNodeUI(t *testing.T, opts ...webui.Option) string {
	t.Helper()
	return serve(t, webui.NewNodeManagerUI("node-1", func() []webui.Container { return nil }, opts...)).URL
}

// A browser sends the secret as the password of HTTP Basic, with any user
// name; the page shows that name. A wrong password, a malformed header or
// a user name with control characters is refused.
func TestAuthBasic(t *testing.T) {
	url := newNodeUI(t, webui.WithSecret("s3cret"))
	for _, user := range []string{"alice", "", "Zoë Example"} {
		resp, body := do(t, url+"/", "Authorization", basic(user, "s3cret"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "node-1") {
			t.Fatalf("user %q with the secret: %d %q", user, resp.StatusCode, body)
		}
		if shown := strings.Contains(body, `id="user">`+html.EscapeString(user)+"<"); shown != (user != "") {
			t.Fatalf("user %q: shown in the header = %v:\n%s", user, shown, body)
		}
	}
	// With auth off nothing is checked, so no user is recorded.
	if resp, body := do(t, newNodeUI(t)+"/", "Authorization", basic("alice", "anything")); resp.StatusCode != http.StatusOK || strings.Contains(body, `id="user"`) {
		t.Fatalf("auth off: %d, a user shown:\n%s", resp.StatusCode, body)
	}
	if resp, body := do(t, url+"/api/v1/containers", "Authorization", basic("prometheus", "s3cret")); resp.StatusCode != http.StatusOK {
		t.Fatalf("API with Basic: %d %q", resp.StatusCode, body)
	}
	for name, h := range map[string][]string{
		"wrong password":      {"Authorization", basic("alice", "s3cre")},
		"secret as user":      {"Authorization", basic("s3cret", "")},
		"no colon":            {"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("s3cret"))},
		"not base64":          {"Authorization", "Basic !!s3cret"},
		"control char":        {"Authorization", basic("al\nice", "s3cret")},
		"too long a user":     {"Authorization", basic(strings.Repeat("a", webui.MaxUserNameLength+1), "s3cret")},
		"bad UTF-8 user":      {"Authorization", basic("\xff", "s3cret")},
		"two headers":         {"Authorization", "Bearer s3cret", "Authorization", "Bearer s3cret"},
		"other scheme":        {"Authorization", "Digest s3cret"},
		"bare secret":         {"Authorization", "s3cret"},
		"bearer with a space": {"Authorization", "Bearer  s3cret"},
	} {
		if resp, body := do(t, url+"/", h...); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %q, want 401", name, resp.StatusCode, body)
		}
	}
}

// The 401 makes a browser ask for credentials (a Basic challenge) and
// shows it an HTML page; scripts get text, the API JSON.
func TestAuthChallenge(t *testing.T) {
	url := newNodeUI(t, webui.WithSecret("s3cret"))
	for _, tc := range []struct{ path, accept, ctype, want string }{
		{"/", "text/html,application/xhtml+xml,*/*;q=0.8", "text/html", `id="unauthorized"`},
		{"/", "", "text/plain", "Authorization: Bearer"},
		{"/metrics", "*/*", "text/plain", "Authorization: Bearer"},
		{"/api/v1/containers", "text/html", "application/json", `{"error":`},
	} {
		resp, body := do(t, url+tc.path, "Accept", tc.accept)
		challenges := resp.Header.Values("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || len(challenges) == 0 || challenges[0] != `Basic realm="sparkrpc"` ||
			!slices.Contains(challenges, `Bearer realm="sparkrpc"`) {
			t.Fatalf("%s (Accept %q): %d, challenges %q; want 401 with a Basic then a Bearer challenge", tc.path, tc.accept, resp.StatusCode, challenges)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) || !strings.Contains(body, tc.want) ||
			!strings.Contains(body, "spark.authenticate") || strings.Contains(body, "s3cret") {
			t.Fatalf("%s (Accept %q): %s %q", tc.path, tc.accept, resp.Header.Get("Content-Type"), body)
		}
	}
}

// The secret is never taken from the URL, where it would land in logs and
// the browser's history.
func TestAuthNotFromURL(t *testing.T) {
	url := newNodeUI(t, webui.WithSecret("s3cret"))
	for _, q := range []string{"secret", "token", "access_token", "password", "spark.authenticate.secret", "auth"} {
		if resp, body := do(t, url+"/api/v1/containers?"+q+"=s3cret"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("?%s=SECRET: %d %q, want 401", q, resp.StatusCode, body)
		}
	}
}

// Refused credentials are logged at most once a minute, with how many
// were refused, and never with what was offered; a request without
// credentials (a browser's first) is not logged.
func TestAuthRefusalsLogged(t *testing.T) {
	var logs testutil.SyncBuffer
	clock := testutil.NewClock(time.Unix(1_700_000_000, 0))
	url := newNodeUI(t, webui.WithSecret("s3cret"), webui.WithLogger(zerolog.New(&logs)), webui.WithClock(clock.Now))
	do(t, url+"/")
	if logs.String() != "" {
		t.Fatalf("a request without credentials was logged: %s", logs.String())
	}
	offered := []string{"guess-one", "guess-two", "guess-three", "guess-four", "guess-five"}
	for i, g := range offered {
		h := "Bearer " + g
		if i%2 == 1 {
			h = basic("user-"+g, g)
		}
		if resp, _ := do(t, url+"/", "Authorization", h); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%q: %d", h, resp.StatusCode)
		}
	}
	clock.Advance(59 * time.Second)
	do(t, url+"/", "Authorization", "Bearer guess-six")
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"refused":1`) || !strings.Contains(lines[0], "spark.authenticate") {
		t.Fatalf("after 6 refusals within a minute, %d lines, want 1 counting 1:\n%s", len(lines), logs.String())
	}
	clock.Advance(2 * time.Second)
	do(t, url+"/", "Authorization", basic("x", "guess-seven"))
	lines = strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"refused":6`) || !strings.Contains(lines[1], `"scheme":"basic"`) {
		t.Fatalf("a minute later, %d lines, want a second counting 6:\n%s", len(lines), logs.String())
	}
	for _, g := range append(offered, "guess-six", "guess-seven", "s3cret", "user-") {
		if strings.Contains(logs.String(), g) || strings.Contains(logs.String(), base64.StdEncoding.EncodeToString([]byte("x:"+g))) {
			t.Fatalf("the log holds %q:\n%s", g, logs.String())
		}
	}
}
