package kubeclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
)

// TestClientCredentials checks which credential a client uses, that the
// master's server overrides the kubeconfig's, and that errors are typed:
// a real HTTP server answers 401 and 403.
func TestClientCredentials(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://kube.invalid:6443", insecure-skip-tls-verify: true}
users:
- name: u1
  user: {token: kubeconfig-token}
contexts:
- name: ctx1
  context: {cluster: c1, user: u1}
current-context: ctx1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	var gotAuth string
	status := http.StatusUnauthorized
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		reason := map[int]string{401: "Unauthorized", 403: "Forbidden"}[status]
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + reason + `","code":` +
			map[int]string{401: "401", 403: "403"}[status] + `,"details":{"kind":"namespaces","name":"jobs"}}`))
	}))
	defer srv.Close()

	conf := actor.NewConf()
	c, err := New(conf, Options{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != srv.URL || !strings.Contains(c.Credential, `user "u1"`) {
		t.Fatalf("server %s credential %q", c.Server, c.Credential)
	}
	err = c.CheckAccess(t.Context(), "jobs")
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), `user "u1"`) ||
		gotAuth != "Bearer kubeconfig-token" {
		t.Fatalf("CheckAccess = %v (auth %q)", err, gotAuth)
	}

	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte("file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf.Set(kubeconf.KeyAuthSubmissionPrefix+kubeconf.AuthOAuthTokenFile, tokFile)
	c, err = New(conf, Options{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	status = http.StatusForbidden
	err = c.CheckAccess(t.Context(), "jobs")
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "list") || !strings.Contains(err.Error(), `"jobs"`) ||
		gotAuth != "Bearer file-token" || !strings.Contains(c.Credential, tokFile) {
		t.Fatalf("CheckAccess = %v (auth %q, credential %q)", err, gotAuth, c.Credential)
	}

	conf.Set(kubeconf.KeyAuthSubmissionPrefix+kubeconf.AuthOAuthToken, "x")
	if _, err := New(conf, Options{Server: srv.URL}); !errors.Is(err, ErrCredentials) {
		t.Fatalf("token and token file: %v", err)
	}
}

func TestClientUnreachable(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	// A listener that never answers: the request timeout bounds the call.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	conf := actor.NewConf().Set(kubeconf.KeySubmissionRequestTimeout, "300ms")
	c, err := New(conf, Options{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = c.CheckAccess(t.Context(), "default")
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), kubeconf.KeySubmissionRequestTimeout) {
		t.Fatalf("CheckAccess = %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %s", d)
	}
}
