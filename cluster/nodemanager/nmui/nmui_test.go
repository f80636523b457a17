package nmui_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster/nodemanager/nmui"
)

// Before its node manager runs, the UI answers without one: no containers,
// metrics unavailable, and no container's log.
func TestUIBeforeTheNodeManagerRuns(t *testing.T) {
	var n nmui.Node
	h := nmui.Handler("127.0.0.1:1", &n)
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/api/v1/containers", http.StatusOK, "[]"},
		{"/metrics", http.StatusServiceUnavailable, "the node manager is starting"},
		{"/node/containerlogs/container_1_0001_01_000001/u/stderr", http.StatusNotFound, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("GET %s = %d %q, want %d with %q", tc.path, rec.Code, rec.Body.String(), tc.code, tc.body)
		}
	}
}
