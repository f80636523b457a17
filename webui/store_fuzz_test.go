package webui_test

import (
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// fuzzEvents reads events from b: each a kind byte then its numbers, 8
// bytes each, any value (negative, huge, zero times).
func fuzzEvents(b []byte) []endpoints.Event {
	num := func() int64 {
		if len(b) < 8 {
			b = nil
			return 0
		}
		v := int64(binary.LittleEndian.Uint64(b))
		b = b[8:]
		return v
	}
	var evs []endpoints.Event
	for len(b) > 0 {
		kind := b[0] % 8
		b = b[1:]
		at, job, task, part, n := time.Unix(0, num()), num()%4, num()%16, int(num()), int(num())
		exec := strconv.Itoa(int(task % 3))
		switch kind {
		case 0:
			evs = append(evs, endpoints.ApplicationStart{AppID: "a", Time: at})
		case 1:
			evs = append(evs, endpoints.ExecutorAdded{ExecutorID: exec, Host: "h", Cores: n, Time: at})
		case 2:
			evs = append(evs, endpoints.ExecutorRemoved{ExecutorID: exec, Time: at})
		case 3:
			evs = append(evs, endpoints.JobStart{JobID: job, NumTasks: n, Time: at})
		case 4:
			evs = append(evs, endpoints.JobEnd{JobID: job, Time: at})
		case 5:
			evs = append(evs, endpoints.TaskStart{JobID: job, TaskID: task, Partition: part, Attempt: n, ExecutorID: exec, Time: at})
		case 6:
			evs = append(evs, endpoints.TaskEnd{JobID: job, TaskID: task, Partition: part, ExecutorID: exec, Time: at,
				Duration: time.Duration(n), ResultSize: int64(n), State: messages.TaskState(part % 8)})
		case 7:
			evs = append(evs, endpoints.ApplicationEnd{Time: at})
		}
	}
	return evs
}

// FuzzAppStore feeds a store any events and renders its pages: nothing
// panics, every page answers.
func FuzzAppStore(f *testing.F) {
	le := func(vs ...int64) []byte {
		var out []byte
		for _, v := range vs {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
		return out
	}
	f.Add(append(append([]byte{3}, le(0, 1, 0, 0, -1)...), append([]byte{6}, le(0, 1, 2, 0, 5)...)...))
	f.Add(append([]byte{3}, le(0, 1, 0, 0, 2e9)...))
	f.Add(append([]byte{1}, le(-8e18, 0, 0, 0, 1)...))
	f.Add(append(append([]byte{0}, le(1e18, 0, 0, 0, 0)...), append([]byte{5}, le(-1, 1, 2, -7, -1)...)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := webui.NewAppStore(webui.WithRetainedTasks(4), webui.WithRetainedJobs(2))
		for _, ev := range fuzzEvents(b) {
			s.OnEvent(ev)
		}
		srv := webui.NewApplicationUI(s)
		for _, p := range []string{"/jobs/", "/jobs/job/?id=0", "/jobs/job/?id=1", "/jobs/job/?id=-1&task.sort=Duration",
			"/executors/", "/api/v1/applications/a", "/api/v1/applications/a/jobs", "/api/v1/applications/a/allexecutors",
			"/api/v1/applications/a/stages/1/0/taskList?sortBy=-runtime"} {
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
			if w.Code >= 500 || w.Body.Len() > 1<<20 {
				t.Fatalf("%s = %d, %d bytes", p, w.Code, w.Body.Len())
			}
		}
	})
}
