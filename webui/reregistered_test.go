package webui_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// An executor id that registers again after its removal (the driver
// refuses only an id that is registered) is shown while it runs, however
// many executors are removed after it. Before, the id's first removal stayed
// in the list of removed executors, and when that entry aged out
// (spark.ui.retainedDeadExecutors) it deleted the running executor.
func TestAReregisteredExecutorIsNotDroppedWithItsOldRecord(t *testing.T) {
	s := webui.NewAppStore(webui.WithRetainedDeadExecutors(2))
	now := time.Now()
	s.OnEvent(endpoints.ApplicationStart{Time: now, AppID: "a"})
	s.OnEvent(endpoints.ExecutorAdded{Time: now, ExecutorID: "1", Host: "h1", Cores: 1})
	s.OnEvent(endpoints.ExecutorRemoved{Time: now, ExecutorID: "1", Reason: "lost"})
	s.OnEvent(endpoints.ExecutorAdded{Time: now, ExecutorID: "1", Host: "h1", Cores: 1}) // again
	for _, id := range []string{"2", "3", "4"} {
		s.OnEvent(endpoints.ExecutorAdded{Time: now, ExecutorID: id, Host: "h" + id, Cores: 1})
		s.OnEvent(endpoints.ExecutorRemoved{Time: now, ExecutorID: id, Reason: "lost"})
	}
	ui := webui.NewApplicationUI(s)
	w := httptest.NewRecorder()
	ui.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/applications/a/executors", nil))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id": "1"`) {
		t.Fatalf("active executors = %d %s; want executor 1, registered again and running", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	ui.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/applications/a/allexecutors", nil))
	if n := strings.Count(w.Body.String(), `"id": `); n != 3 {
		t.Fatalf("all executors: %d, want 3 (1 running, the last 2 removed): %s", n, w.Body)
	}
}
