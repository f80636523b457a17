package webui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sparkrpc/sparkrpc/webui"
)

// Spark's JobExecutionStatus.fromString and TaskSorting.fromString ignore
// case, and Spark's documentation spells the values in lower case
// (?status=running): a Spark client's filter selects the same jobs, and an
// unknown status is a 400. Before, a filter in lower case selected nothing
// and an unknown status answered 200 and [].
func TestJobsStatusFilterIgnoresCaseAsSpark(t *testing.T) {
	s := webui.NewAppStore()
	replay(s, true)
	ui := webui.NewApplicationUI(s)
	jobs := func(q string) (int, []map[string]any) {
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/applications/"+storeApp+"/jobs?"+q, nil))
		var out []map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	for _, q := range []string{"status=running", "status=Running", "status=RUNNING"} {
		if code, out := jobs(q); code != http.StatusOK || len(out) != 1 || out[0]["jobId"] != float64(3) {
			t.Errorf("jobs?%s = %d %v; want 200 and job 3, the running one", q, code, out)
		}
	}
	if code, out := jobs("status=succeeded&status=failed"); code != http.StatusOK || len(out) != 2 {
		t.Errorf("jobs?status=succeeded&status=failed = %d %v; want jobs 1 and 2", code, out)
	}
	if code, _ := jobs("status=bogus"); code != http.StatusBadRequest && code != http.StatusNotFound {
		t.Errorf("jobs?status=bogus = %d; want a 4xx, as Spark (no such JobExecutionStatus)", code)
	}
}

// Spark's taskList takes sortBy ID, runtime, -runtime in any case and the
// enum's names (INCREASING_RUNTIME, DECREASING_RUNTIME); offset and length
// that are not integers of at least 0 are refused with a 400. Before, the
// enum's names were a 400 and bad offsets and lengths were ignored.
func TestTaskListParamsAsSpark(t *testing.T) {
	s := webui.NewAppStore()
	replay(s, true)
	ui := webui.NewApplicationUI(s)
	base := "/api/v1/applications/" + storeApp + "/stages/1/0/taskList?"
	get := func(q string) (int, []map[string]any) {
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+q, nil))
		var out []map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	for q, first := range map[string]float64{"sortBy=id": 10, "sortBy=RUNTIME": 10, "sortBy=INCREASING_RUNTIME": 10,
		"sortBy=DECREASING_RUNTIME": 11, "sortBy=-Runtime": 11} {
		if code, out := get(q); code != http.StatusOK || len(out) != 2 || out[0]["taskId"] != first {
			t.Errorf("taskList?%s = %d %v; want 200, task %v first", q, code, out, first)
		}
	}
	for _, q := range []string{"offset=abc", "length=x", "offset=-5", "length=-3", "offset=99999999999999999999"} {
		if code, _ := get(q); code < 400 || code >= 500 {
			t.Errorf("taskList?%s = %d; want a 4xx", q, code)
		}
	}
}
