package webui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// feedTasks feeds s a job of n tasks on 10 executors, every tenth failed
// with a two-line error, the last hundred still running.
func feedTasks(s *webui.AppStore, n int) {
	s.OnEvent(endpoints.ApplicationStart{Time: t0, AppID: storeApp, AppName: "many tasks", DriverHostPort: "driver:1"})
	for e := range 10 {
		s.OnEvent(endpoints.ExecutorAdded{Time: t0, ExecutorID: fmt.Sprint(e + 1), Host: fmt.Sprintf("host-%d", e+1), Cores: 8})
	}
	s.OnEvent(endpoints.JobStart{Time: t0, JobID: 1, TaskName: "many", NumTasks: n})
	for i := range n {
		ex := fmt.Sprint(1 + i%10)
		at := t0.Add(time.Duration(i) * time.Millisecond)
		s.OnEvent(endpoints.TaskStart{Time: at, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: ex})
		if i >= n-100 {
			continue
		}
		end := endpoints.TaskEnd{Time: at.Add(5 * time.Millisecond), JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: ex,
			State: messages.TaskState_TASK_STATE_FINISHED, Duration: 5 * time.Millisecond, RunTime: 4 * time.Millisecond, ResultSize: int64(i)}
		if i%10 == 0 {
			end.State, end.Error = messages.TaskState_TASK_STATE_FAILED, "task failed: an error\n\tat a line of its trace"
		}
		s.OnEvent(end)
	}
}

// A job of 100,000 tasks: the store keeps them all (Spark's
// spark.ui.retainedTasks default), and its page, sorted by any column,
// stays under 1 MiB.
func TestJobPageOfAHundredThousandTasks(t *testing.T) {
	const n = 100000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	store := webui.NewAppStore()
	feedTasks(store, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("the store holds %d tasks in about %d bytes each (a tenth with an error's text)",
		n, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/n)
	url := serve(t, webui.NewApplicationUI(store)).URL
	for _, q := range []string{"", "&task.sort=Duration&task.desc=true", "&task.sort=Host&task.page=1000", "&task.pageSize=100000"} {
		code, body := get(t, url+"/jobs/job/?id=1"+q, "")
		if code != http.StatusOK || !strings.Contains(body, `id="task-table"`) || !strings.Contains(body, `id="job-timeline"`) ||
			!strings.Contains(body, "Tasks (100000)") || !strings.Contains(body, "99000 tasks not drawn") {
			t.Fatalf("job page%s = %d:\n%.2000s", q, code, body)
		}
		if len(body) >= 1<<20 {
			t.Fatalf("job page%s is %d bytes, want < 1 MiB", q, len(body))
		}
		t.Logf("job page%s: %d bytes", q, len(body))
	}
	var tasks []struct {
		TaskID int64 `json:"taskId"`
	}
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/stages/1/0/taskList?offset=99990&length=20", &tasks)
	if len(tasks) != 10 || tasks[9].TaskID != n-1 {
		t.Fatalf("taskList's end = %+v", tasks)
	}
	runtime.KeepAlive(store)
}

// Beyond spark.ui.retainedTasks, a job's oldest ended attempts are
// dropped, a tenth of the limit at least at a time; its counts keep them
// and its page says how many are gone.
func TestRetainedTasksBoundsAJob(t *testing.T) {
	store := webui.NewAppStore(webui.WithRetainedTasks(1000))
	feedTasks(store, 5000)
	url := serve(t, webui.NewApplicationUI(store)).URL
	var tasks []struct {
		TaskID int64 `json:"taskId"`
	}
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/stages/1/0/taskList?length=1000", &tasks)
	if len(tasks) > 1000 || len(tasks) < 900 || tasks[len(tasks)-1].TaskID != 4999 {
		t.Fatalf("kept %d tasks, the last %+v; want 900 to 1000, up to the newest", len(tasks), tasks[len(tasks)-1])
	}
	var job jobJSON
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/jobs/1", &job)
	if job.NumCompletedTasks != 4900-490 || job.NumActiveTasks != 100 {
		t.Fatalf("job = %+v; want the counts of every attempt", job)
	}
	_, body := get(t, url+"/jobs/job/?id=1", "")
	if !strings.Contains(body, `id="tasks-dropped"`) || !strings.Contains(body, "spark.ui.retainedTasks = 1000") {
		t.Fatalf("the page does not say tasks were dropped:\n%.3000s", body)
	}
}

// BenchmarkJobPage renders a page of a 100,000-task job sorted by a
// column.
func BenchmarkJobPage(b *testing.B) {
	store := webui.NewAppStore()
	feedTasks(store, 100000)
	ui := webui.NewApplicationUI(store)
	for _, sortBy := range []string{"Index", "Duration", "Host", "Errors"} {
		b.Run(sortBy, func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest(http.MethodGet, "/jobs/job/?id=1&task.desc=true&task.sort="+sortBy, nil)
			for b.Loop() {
				rec := httptest.NewRecorder()
				ui.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
				b.SetBytes(int64(rec.Body.Len()))
			}
		})
	}
}

// A log of task starts without their ends (a hostile one, or a job of
// more running tasks than the limit) keeps at most spark.ui.retainedTasks
// rows: the oldest running ones go, and the page says how many; their
// ends, when they come, are counted and not kept again.
func TestRetainedTasksBoundsRunningTasks(t *testing.T) {
	const retained, n = 10000, 50000
	store := webui.NewAppStore(webui.WithRetainedTasks(retained))
	store.OnEvent(endpoints.ApplicationStart{Time: t0, AppID: storeApp})
	store.OnEvent(endpoints.JobStart{Time: t0, JobID: 1, NumTasks: n})
	start := time.Now()
	for i := range n {
		store.OnEvent(endpoints.TaskStart{Time: t0, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: "1"})
	}
	t.Logf("%d starts without ends, retainedTasks %d: %v", n, retained, time.Since(start))
	for i := range 100 {
		store.OnEvent(endpoints.TaskEnd{Time: t0.Add(time.Second), JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: "1",
			State: messages.TaskState_TASK_STATE_FINISHED, Duration: time.Second})
	}
	url := serve(t, webui.NewApplicationUI(store)).URL
	var job jobJSON
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/jobs/1", &job)
	if job.NumCompletedTasks != 100 || job.NumActiveTasks != n-100 {
		t.Fatalf("job = %+v; want the counts of every attempt", job)
	}
	var tasks []struct {
		TaskID int64 `json:"taskId"`
	}
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/stages/1/0/taskList", &tasks)
	if len(tasks) == 0 || tasks[0].TaskID < n-retained {
		t.Fatalf("kept tasks from %+v; want the newest %d", tasks, retained)
	}
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/stages/1/0/taskList?offset="+strconv.Itoa(retained), &tasks)
	if len(tasks) != 0 {
		t.Fatalf("kept more than %d tasks", retained)
	}
	_, body := get(t, url+"/jobs/job/?id=1", "")
	if !strings.Contains(body, `id="running-dropped"`) {
		t.Fatalf("the page does not say running tasks were dropped:\n%.3000s", body)
	}
}

// BenchmarkTaskStartsWithoutEnds is the cost of a task start in a job
// that holds spark.ui.retainedTasks running attempts.
func BenchmarkTaskStartsWithoutEnds(b *testing.B) {
	store := webui.NewAppStore(webui.WithRetainedTasks(10000))
	store.OnEvent(endpoints.JobStart{Time: t0, JobID: 1, NumTasks: b.N})
	b.ReportAllocs()
	for i := range b.N {
		store.OnEvent(endpoints.TaskStart{Time: t0, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: "1"})
	}
}

// BenchmarkOnEventDuringRenders is the wait of the listener bus's events
// into the store, one a millisecond, while two clients render a page of a
// 100,000-task job sorted by its errors, b.N times each: the store's lock
// is held for a copy of the rows, never for their sort.
func BenchmarkOnEventDuringRenders(b *testing.B) {
	store := webui.NewAppStore()
	feedTasks(store, 100000)
	h := webui.NewApplicationUI(store)
	var wg sync.WaitGroup
	done := make(chan struct{})
	b.ResetTimer()
	for range 2 {
		wg.Go(func() {
			for range b.N {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/jobs/job/?id=1&task.sort=Errors&task.desc=true", nil))
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var worst, total time.Duration
	events := 0
	for id := int64(200000); ; id++ {
		select {
		case <-done:
			b.ReportMetric(float64(total.Microseconds())/float64(max(1, events)), "µs/event")
			b.ReportMetric(float64(worst.Microseconds()), "worst-µs")
			return
		case <-tick.C:
		}
		start := time.Now()
		store.OnEvent(endpoints.TaskStart{Time: t0, JobID: 2, TaskID: id, ExecutorID: "1"})
		d := time.Since(start)
		worst, total, events = max(worst, d), total+d, events+1
	}
}
