package webui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A job's count of tasks or a task's index, however large or negative,
// neither panics the store nor sizes what it allocates.
func TestAHostileTaskCountNeitherPanicsNorAllocates(t *testing.T) {
	s := webui.NewAppStore()
	s.OnEvent(endpoints.ApplicationStart{AppID: "a"})
	fin := messages.TaskState_TASK_STATE_FINISHED
	n := allocated(func() {
		s.OnEvent(endpoints.JobStart{JobID: 1, NumTasks: -1})
		s.OnEvent(endpoints.TaskEnd{JobID: 1, TaskID: 1, Partition: 0, State: fin})
		s.OnEvent(endpoints.JobStart{JobID: 2, NumTasks: 2_000_000_000})
		s.OnEvent(endpoints.TaskEnd{JobID: 2, TaskID: 2, Partition: 1_999_999_999, State: fin})
		s.OnEvent(endpoints.TaskEnd{JobID: 2, TaskID: 3, Partition: 99_999_999, State: fin})
		s.OnEvent(endpoints.TaskEnd{JobID: 2, TaskID: 4, Partition: -5, State: fin})
	})
	if n > 1<<20 {
		t.Errorf("six events allocated %d bytes", n)
	}
	srv := webui.NewApplicationUI(s)
	for _, p := range []string{"/jobs/", "/jobs/job/?id=1", "/jobs/job/?id=2", "/api/v1/applications/a/jobs"} {
		start := time.Now()
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		if w.Code != http.StatusOK {
			t.Errorf("%s = %d: %s", p, w.Code, w.Body)
		}
		t.Logf("%s: %d bytes in %v", p, w.Body.Len(), time.Since(start))
	}
}

// A job's completed indices are counted once each, in and out of order.
func TestCompletedIndicesCountEachIndexOnce(t *testing.T) {
	s := webui.NewAppStore()
	s.OnEvent(endpoints.ApplicationStart{AppID: "a"})
	s.OnEvent(endpoints.JobStart{JobID: 1, NumTasks: 100_000, Time: time.Unix(1, 0)})
	fin := messages.TaskState_TASK_STATE_FINISHED
	id := int64(0)
	for _, p := range []int{99_999, 5, 5, 99_999, 70_000, 0, 100_000, -1} {
		id++
		s.OnEvent(endpoints.TaskEnd{JobID: 1, TaskID: id, Partition: p, State: fin})
	}
	for p := range 100_000 {
		id++
		s.OnEvent(endpoints.TaskEnd{JobID: 1, TaskID: id, Partition: p, State: fin})
	}
	var jobs []struct {
		NumCompletedIndices int `json:"numCompletedIndices"`
	}
	srv := webui.NewApplicationUI(s)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/applications/a/jobs", nil))
	if err := json.Unmarshal(w.Body.Bytes(), &jobs); err != nil || len(jobs) != 1 || jobs[0].NumCompletedIndices != 100_000 {
		t.Fatalf("jobs = %+v, %v; want 100000 completed indices", jobs, err)
	}
}

// Task ends without their starts (a log cut at its head, or a hostile one)
// are kept within spark.ui.retainedTasks, as started tasks are. Before, each
// such end added a row and none was ever dropped.
func TestTaskEndsWithoutStartsKeepTheRetainedTasksLimit(t *testing.T) {
	const limit = 100
	s := webui.NewAppStore(webui.WithRetainedTasks(limit))
	s.OnEvent(endpoints.ApplicationStart{AppID: "a", Time: time.Unix(1, 0)})
	s.OnEvent(endpoints.JobStart{JobID: 1, NumTasks: 10_000, Time: time.Unix(1, 0)})
	for id := range int64(10_000) {
		s.OnEvent(endpoints.TaskEnd{JobID: 1, TaskID: id, Partition: int(id), Time: time.Unix(2, 0),
			State: messages.TaskState_TASK_STATE_FINISHED})
	}
	w := httptest.NewRecorder()
	webui.NewApplicationUI(s).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/applications/a/stages/1/0/taskList?length=1000", nil))
	var tasks []json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &tasks); err != nil {
		t.Fatalf("%d %v: %s", w.Code, err, w.Body)
	}
	if len(tasks) > limit {
		t.Fatalf("the job keeps %d task attempts; spark.ui.retainedTasks is %d", len(tasks), limit)
	}
}

// Task starts and ends out of id order (starts written in descending order,
// ends without their starts among them) are kept in id order with the state
// their ends gave them, across the batches in which out-of-order rows are
// merged.
func TestTasksOutOfOrderAreKeptInOrder(t *testing.T) {
	s := webui.NewAppStore()
	s.OnEvent(endpoints.ApplicationStart{AppID: "a", Time: time.Unix(1, 0)})
	s.OnEvent(endpoints.JobStart{JobID: 1, NumTasks: 5000, Time: time.Unix(1, 0)})
	const n = 5000
	for id := int64(n - 1); id >= 0; id-- {
		if id%7 == 0 {
			continue // these end without a start
		}
		s.OnEvent(endpoints.TaskStart{JobID: 1, TaskID: id, Partition: int(id), Time: time.Unix(2, 0)})
	}
	for id := int64(0); id < n; id += 7 {
		s.OnEvent(endpoints.TaskEnd{JobID: 1, TaskID: id, Partition: int(id), Time: time.Unix(3, 0),
			State: messages.TaskState_TASK_STATE_FAILED})
	}
	for id := int64(1); id < n; id += 2 {
		if id%7 != 0 {
			s.OnEvent(endpoints.TaskEnd{JobID: 1, TaskID: id, Partition: int(id), Time: time.Unix(3, 0),
				State: messages.TaskState_TASK_STATE_FINISHED})
		}
	}
	type task struct {
		TaskID int64  `json:"taskId"`
		Status string `json:"status"`
	}
	var tasks []task
	ui := webui.NewApplicationUI(s)
	for offset := 0; offset < n; offset += 1000 { // a page's most
		var page []task
		w := httptest.NewRecorder()
		ui.ServeHTTP(w, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/applications/a/stages/1/0/taskList?offset=%d&length=1000", offset), nil))
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatalf("%d %v: %s", w.Code, err, w.Body)
		}
		tasks = append(tasks, page...)
	}
	if len(tasks) != n {
		t.Fatalf("%d task attempts, want %d", len(tasks), n)
	}
	for i, task := range tasks {
		want := "RUNNING"
		switch {
		case i%7 == 0:
			want = "FAILED"
		case i%2 == 1:
			want = "SUCCESS"
		}
		if task.TaskID != int64(i) || task.Status != want {
			t.Fatalf("row %d: task %d %s, want task %d %s", i, task.TaskID, task.Status, i, want)
		}
	}
}
