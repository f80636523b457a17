package webui_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/webui"
)

// A UI that holds one secret and a verifier of another accepts both, as a
// bearer token and as Basic's password, and nothing else; the verifier
// itself does not open it.
func TestSecretVerifier(t *testing.T) {
	v, err := webui.NewSecretVerifier([]byte("the-cluster-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v, "the-cluster-secret") || !strings.HasPrefix(v, "pbkdf2-sha256$") {
		t.Fatalf("verifier %q", v)
	}
	if w, _ := webui.NewSecretVerifier([]byte("the-cluster-secret")); w == v {
		t.Fatal("two verifiers of one secret are equal: no random salt")
	}
	url := newNodeUI(t, webui.WithSecret("the-app-secret"), webui.WithSecretVerifier(v))
	for _, h := range [][]string{
		{"Authorization", basic("alice", "the-cluster-secret")},
		{"Authorization", basic("alice", "the-cluster-secret")}, // remembered
		{"Authorization", "Bearer the-cluster-secret"},
		{"Authorization", basic("bob", "the-app-secret")},
	} {
		if resp, body := do(t, url+"/", h...); resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: %d %q", h[1], resp.StatusCode, body)
		}
	}
	for _, bad := range []string{"the-cluster-secre", "the-cluster-secret2", "", v} {
		if resp, _ := do(t, url+"/", "Authorization", basic("alice", bad)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("password %q: %d, want 401", bad, resp.StatusCode)
		}
	}
	// An invalid verifier adds nothing; without a secret nothing is required.
	url = newNodeUI(t, webui.WithSecret("the-app-secret"), webui.WithSecretVerifier("pbkdf2-sha256$1$AAAA$AAAA"))
	if resp, _ := do(t, url+"/", "Authorization", "Bearer the-cluster-secret"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("invalid verifier: %d, want 401", resp.StatusCode)
	}
	if resp, _ := do(t, newNodeUI(t, webui.WithSecretVerifier(v))+"/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("auth off: %d", resp.StatusCode)
	}
}

func TestSecretVerifierFromConf(t *testing.T) {
	v, err := webui.NewSecretVerifier([]byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := webui.SecretVerifierFromConf(actor.NewConf().Set(webui.KeyUISecretVerifier, v)); err != nil || got != v {
		t.Fatalf("valid: %q, %v", got, err)
	}
	if got, err := webui.SecretVerifierFromConf(actor.NewConf()); err != nil || got != "" {
		t.Fatalf("unset: %q, %v", got, err)
	}
	for _, bad := range []string{"x", "sha1$1$AAAA$" + strings.Repeat("A", 43), "pbkdf2-sha256$0$AAAA$" + strings.Repeat("A", 43),
		"pbkdf2-sha256$99999999$AAAA$" + strings.Repeat("A", 43), "pbkdf2-sha256$10$!!$" + strings.Repeat("A", 43), "pbkdf2-sha256$10$AAAA$AAAA"} {
		_, err := webui.SecretVerifierFromConf(actor.NewConf().Set(webui.KeyUISecretVerifier, bad))
		if !errors.Is(err, webui.ErrInvalidConfig) || !strings.Contains(err.Error(), webui.KeyUISecretVerifier) {
			t.Errorf("%q: %v, want ErrInvalidConfig naming the key", bad, err)
		}
	}
}
