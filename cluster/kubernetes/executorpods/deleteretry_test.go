package executorpods

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// flakyPodsAPI holds executor pods; its first deletecollection fails with
// 503, as while the API server restarts.
type flakyPodsAPI struct {
	mu      sync.Mutex
	pods    map[string]corev1.Pod
	refused bool
}

func (s *flakyPodsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	const coll = "/api/v1/namespaces/default/pods"
	switch {
	case r.Method == http.MethodDelete && r.URL.Path == coll && !s.refused:
		s.refused = true
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503,"message":"etcd is restarting"}`))
	case r.Method == http.MethodDelete && r.URL.Path == coll:
		clear(s.pods)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	case r.Method == http.MethodDelete:
		delete(s.pods, strings.TrimPrefix(r.URL.Path, coll+"/"))
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	default: // the list
		l := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
		for _, p := range s.pods {
			l.Items = append(l.Items, p)
		}
		_ = json.NewEncoder(w).Encode(&l)
	}
}

// Stop deletes the executor pods (deleteExecutorPods) even when the API
// server fails a request transiently: a 503 is retried, as the allocator
// retries 5xx, 429, conflicts and timeouts elsewhere, not the end of the
// deletion with the pods left running (client mode: no owner deletes them).
func TestStopRetriesTransientDeleteFailure(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cfg := testConfig()
	api := &flakyPodsAPI{pods: map[string]corev1.Pod{}}
	for _, id := range []int64{1, 2} {
		p := Pod(cfg, id, "spark://CoarseGrainedScheduler@127.0.0.1:1", "", nil)
		api.pods[p.Name] = *p
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer srv.CloseClientConnections()
	client, err := kubeclient.New(actor.NewConf(), kubeclient.Options{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = deleteExecutorPods(testutil.Context(t, 20*time.Second), client, cfg.Namespace, cfg.AppID, zerolog.Nop())
	api.mu.Lock()
	defer api.mu.Unlock()
	if err != nil || len(api.pods) != 0 {
		t.Fatalf("deleting the executor pods after one 503: %v; %d executor pods left", err, len(api.pods))
	}
}
