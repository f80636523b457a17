package executorpods

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
)

// scriptedAPI is an API server whose answers to pod creations and
// deletions the test sets: an HTTP status and a message (0: success).
type scriptedAPI struct {
	mu      sync.Mutex
	answers []scriptedAnswer
	created []string
}

type scriptedAnswer struct {
	code int
	msg  string
}

func (s *scriptedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	var a scriptedAnswer
	if len(s.answers) > 0 {
		a, s.answers = s.answers[0], s.answers[1:]
	}
	if a.code == 0 && r.Method == http.MethodPost {
		s.created = append(s.created, r.URL.Path)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case a.code == 0 && r.Method == http.MethodPost:
		w.Header().Set("Content-Type", r.Header.Get("Content-Type")) // the pod, as sent
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	case a.code == 0:
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	default:
		reason := map[int]string{403: "Forbidden", 500: "InternalError", 503: "ServiceUnavailable"}[a.code]
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + reason + `","code":` +
			strconv.Itoa(a.code) + `,"message":` + strconv.Quote(a.msg) + `}`))
	}
}

func (s *scriptedAPI) script(answers ...scriptedAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers, s.created = answers, nil
}

// TestCreateRefusals drives the allocator's creations and deletions against
// an API server that refuses some: a quota refusal stops the batch, forgets
// the pods not created and backs off with a line naming the quota; a
// transient error backs off silently for the user; an RBAC denial fails the
// application; a failed deletion is asked for again after a backoff.
func TestCreateRefusals(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	api := &scriptedAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer srv.CloseClientConnections()
	client, err := kubeclient.New(actor.NewConf(), kubeclient.Options{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reports []string
	cfg := testConfig()
	a := NewAllocator(cfg, client, Options{Logger: zerolog.Nop(), Report: func(l string) {
		mu.Lock()
		reports = append(reports, l)
		mu.Unlock()
	}})
	ctx := context.Background()
	const quota = `pods "x" is forbidden: exceeded quota: team-quota, requested: pods=1, used: pods=2, limited: pods=2`

	// The second pod of a batch of 3 is refused by the quota.
	now := time.Now()
	a.created = map[int64]time.Time{1: now, 2: now, 3: now}
	a.nextID = 4
	api.script(scriptedAnswer{}, scriptedAnswer{403, quota})
	a.createPods(ctx, []int64{1, 2, 3})
	if len(api.created) != 1 || len(a.created) != 1 || a.created[1].IsZero() || a.nextID != 2 {
		t.Fatalf("after a refusal at pod 2: created %v on the server, counted %v, next id %d; want pod 1, pod 1, 2", api.created, a.created, a.nextID)
	}
	if a.createAfter.Before(now) || a.refusedSince.IsZero() || !strings.Contains(a.refusedBy, "team-quota") {
		t.Fatalf("no backoff or refusal recorded: after %v since %v by %q", a.createAfter, a.refusedSince, a.refusedBy)
	}
	mu.Lock()
	if len(reports) != 1 || !strings.Contains(reports[0], `ResourceQuota "team-quota" is used up`) {
		t.Fatalf("reports %q", reports)
	}
	mu.Unlock()

	// The same refusal again: backoff grows, the line is not repeated.
	first := a.createAfter.Sub(now)
	api.script(scriptedAnswer{403, quota})
	a.created = map[int64]time.Time{2: now}
	a.createPods(ctx, []int64{2})
	mu.Lock()
	if len(reports) != 1 || a.createFailures != 2 {
		t.Fatalf("reports %q after the same refusal, %d failures", reports, a.createFailures)
	}
	mu.Unlock()
	if second := time.Until(a.createAfter); second > 2*first+time.Second {
		t.Errorf("backoff %s after %s", second, first)
	}

	// A transient error: backoff, no failure; a success ends the backoff.
	api.script(scriptedAnswer{503, "etcd is restarting"}, scriptedAnswer{})
	a.createPods(ctx, []int64{2})
	a.createPods(ctx, []int64{2})
	if a.createFailures != 0 || !a.createAfter.IsZero() || !a.refusedSince.IsZero() {
		t.Fatalf("after a success: %d failures, backoff until %v, refused since %v", a.createFailures, a.createAfter, a.refusedSince)
	}
	select {
	case err := <-a.Failed():
		t.Fatalf("the application failed: %v", err)
	default:
	}

	// A failed deletion: asked for again after a backoff.
	a.deleting[7] = true
	api.script(scriptedAnswer{500, "boom"})
	a.deletePod(ctx, 7, "sparkpi-abc-exec-7")
	if a.deleting[7] || !a.deleteAfter[7].After(now) || a.deleteFailures[7] != 1 {
		t.Fatalf("after a failed deletion: deleting %v, after %v, failures %d", a.deleting[7], a.deleteAfter[7], a.deleteFailures[7])
	}
	api.script(scriptedAnswer{})
	a.deletePod(ctx, 7, "sparkpi-abc-exec-7")
	if _, ok := a.deleteAfter[7]; ok || a.deleteFailures[7] != 0 {
		t.Fatalf("a deletion that succeeded is still retried")
	}

	// RBAC: fatal, naming verb, resource and namespace.
	api.script(scriptedAnswer{403, `pods is forbidden: User "u" cannot create resource "pods" in API group "" in the namespace "default"`})
	a.createPods(ctx, []int64{3})
	select {
	case err := <-a.Failed():
		if !errors.Is(err, kubeclient.ErrForbidden) || !strings.Contains(err.Error(), "create pods in namespace default") {
			t.Fatalf("failed with %v", err)
		}
	default:
		t.Fatal("an RBAC denial did not fail the application")
	}
}
