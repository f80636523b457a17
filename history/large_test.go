package history_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// hundredThousandTasks are the events of an application of one job of
// 100,000 tasks on 8 executors.
func hundredThousandTasks(app string) []endpoints.Event {
	const tasks, executors = 100_000, 8
	t0 := time.Now().Add(-time.Hour)
	evs := []endpoints.Event{endpoints.ApplicationStart{Time: t0, AppID: app, AppName: "large"}}
	for e := range executors {
		id := string(rune('1' + e))
		evs = append(evs, endpoints.ExecutorAdded{Time: t0, ExecutorID: id, Host: "host" + id, Cores: 4})
	}
	evs = append(evs, endpoints.JobStart{Time: t0, JobID: 1, TaskName: "t", NumTasks: tasks})
	for i := range tasks {
		ex := string(rune('1' + i%executors))
		at := t0.Add(time.Duration(i) * time.Millisecond)
		evs = append(evs, endpoints.TaskStart{Time: at, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: ex},
			endpoints.TaskEnd{Time: at.Add(3 * time.Millisecond), JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: ex,
				State: messages.TaskState_TASK_STATE_FINISHED, Duration: 3 * time.Millisecond, ResultSize: 8})
	}
	return append(evs, endpoints.JobEnd{Time: t0.Add(2 * time.Minute), JobID: 1},
		endpoints.ApplicationEnd{Time: t0.Add(2 * time.Minute)})
}

// A 100,000-task application's log loads, and its task page stays under
// 1 MiB.
func TestHundredThousandTaskApplication(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, "app-large", true, hundredThousandTasks("app-large")...)
	_, hs := historyServer(t, dir)
	start := time.Now()
	code, body := get(t, hs.URL+"/history/app-large/jobs/job/?id=1")
	loaded := time.Since(start)
	if code != 200 || !strings.Contains(body, "host1") {
		t.Fatalf("task page = %d:\n%.2000s", code, body)
	}
	if len(body) >= 1<<20 {
		t.Fatalf("task page of 100,000 tasks is %d bytes, want < 1 MiB", len(body))
	}
	var jobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/app-large/jobs", &jobs)
	if len(jobs) != 1 || jobs[0].NumCompletedTasks != 100_000 {
		t.Fatalf("jobs = %+v", jobs)
	}
	t.Logf("100,000-task log loaded and its task page (%d bytes) served in %v", len(body), loaded)
}

// BenchmarkLoadHundredThousandTasks times the first view of a
// 100,000-task application: its log replayed into a store, and its task
// page drawn.
func BenchmarkLoadHundredThousandTasks(b *testing.B) {
	dir := b.TempDir()
	writeLog(b, dir, "app-large", true, hundredThousandTasks("app-large")...)
	b.ResetTimer()
	for range b.N {
		p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 1})
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		webui.NewHistoryServerUI(p).ServeHTTP(rec, httptest.NewRequest("GET", "/history/app-large/jobs/job/?id=1", nil))
		p.Close()
		if rec.Code != 200 {
			b.Fatalf("task page = %d", rec.Code)
		}
	}
}
