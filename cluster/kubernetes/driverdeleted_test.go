package kubernetes

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// oneDriverPodAPI serves one Pending driver pod (lists, watches, watch-list
// streams) and reports it DELETED on its watches once deleted is closed.
type oneDriverPodAPI struct {
	pod     *corev1.Pod
	deleted chan struct{}
}

func (s *oneDriverPodAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") != "true" && q.Get("watch") != "1" {
		_ = json.NewEncoder(w).Encode(&corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
			ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.Pod{*s.pod}})
		return
	}
	send := func(typ string, obj any) {
		_ = json.NewEncoder(w).Encode(map[string]any{"type": typ, "object": obj})
		w.(http.Flusher).Flush()
	}
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if q.Get("sendInitialEvents") == "true" {
		send("ADDED", s.pod)
		send("BOOKMARK", &corev1.Pod{TypeMeta: s.pod.TypeMeta, ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1",
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	}
	select {
	case <-s.deleted:
		gone := s.pod.DeepCopy()
		gone.ResourceVersion = "2"
		send("DELETED", gone)
	case <-r.Context().Done():
	}
	<-r.Context().Done()
}

// gateWriter holds its first Write (having closed entered) until release closes.
type gateWriter struct {
	once             sync.Once
	entered, release chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered); <-g.release })
	return len(p), nil
}

// A driver pod deleted while submit follows it (submit --kill, kubectl
// delete, an eviction) fails the submission. Before, the watch sent the
// deletion and then its own end without an error, and followDriver, finding
// both ready, could take the end and report the application a success.
func TestDeletedDriverPodIsNotASuccess(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for i := range 20 {
		api := &oneDriverPodAPI{deleted: make(chan struct{}), pod: &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Namespace: "default", ResourceVersion: "1"},
			Status:     corev1.PodStatus{Phase: corev1.PodPending}}}
		srv := httptest.NewServer(api)
		client, err := kubeclient.New(actor.NewConf(), kubeclient.Options{Server: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		out := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			done <- followDriver(testutil.Context(t, 30*time.Second), cluster.SubmitConfig{Stderr: out}, client, "default", "app-driver", time.Hour)
		}()
		<-out.entered // followDriver prints the pod's first state
		close(api.deleted)
		testutil.Eventually(t, 10*time.Second, "followDriver's watch goroutine to end", func() bool {
			buf := make([]byte, 1<<20)
			return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "created by github.com/sparkrpc/sparkrpc/cluster/kubernetes.followDriver")
		})
		close(out.release)
		err = <-done
		srv.CloseClientConnections()
		srv.Close()
		if !errors.Is(err, ErrDriverFailed) {
			t.Fatalf("run %d: followDriver returned %v for a deleted driver pod, want ErrDriverFailed", i, err)
		}
	}
}
