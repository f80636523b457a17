package webui_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// A task page number past the end shows the last page, however large the
// number: its tasks and the "Tasks X–Y of N" line agree. Before, a page
// whose offset ((page-1)*pageSize) overflowed an int showed the first
// tasks (or others) under the last page's number, as "Tasks 201–300 of
// 250".
func TestAHugeTaskPageNumberShowsTheLastPage(t *testing.T) {
	s := webui.NewAppStore()
	now := time.Now()
	s.OnEvent(endpoints.ApplicationStart{Time: now, AppID: "a"})
	s.OnEvent(endpoints.JobStart{Time: now, JobID: 1, TaskName: "t", NumTasks: 250})
	for i := range 250 {
		s.OnEvent(endpoints.TaskEnd{Time: now, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: "1",
			State: messages.TaskState_TASK_STATE_FINISHED})
	}
	ui := webui.NewApplicationUI(s)
	summary := regexp.MustCompile(`Tasks ([0-9]+)–([0-9]+) of 250`)
	first := regexp.MustCompile(`data-task="([0-9]+)"`)
	for _, tc := range []struct{ query, summary, first string }{
		{"task.page=99", "Tasks 201–250 of 250", "200"},
		{"task.page=9223372036854775807", "Tasks 201–250 of 250", "200"},
		{"task.page=4611686018427387905&task.pageSize=4", "Tasks 249–250 of 250", "248"},
	} {
		w := httptest.NewRecorder()
		ui.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/jobs/job/?id=1&"+tc.query, nil))
		body := w.Body.String()
		gotSummary := summary.FindString(body)
		gotFirst := first.FindStringSubmatch(body)
		if w.Code != http.StatusOK || gotSummary != tc.summary || gotFirst == nil || gotFirst[1] != tc.first {
			t.Errorf("%s: %d, %q, first task %v; want %q from task %s", tc.query, w.Code, gotSummary, gotFirst, tc.summary, tc.first)
		}
	}
}
