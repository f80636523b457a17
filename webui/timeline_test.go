package webui_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// A timeline draws a bounded number of ticks whatever its times: one far
// in the past, unknown (zero) ones, a span of centuries.
func TestTimelineTicksAreBoundedWhateverTheTimes(t *testing.T) {
	fin := messages.TaskState_TASK_STATE_FINISHED
	for name, evs := range map[string][]endpoints.Event{
		"an executor at -8e15 ms": {
			endpoints.ApplicationStart{AppID: "a", Time: t0},
			endpoints.ExecutorAdded{ExecutorID: "1", Host: "h", Time: time.UnixMilli(-8e15)},
			endpoints.JobStart{JobID: 1, NumTasks: 1, Time: t0.Add(time.Second)},
			endpoints.TaskStart{JobID: 1, TaskID: 1, ExecutorID: "1", Time: time.UnixMilli(-8e15)},
		},
		"unknown times": {
			endpoints.ApplicationStart{AppID: "a"},
			endpoints.ExecutorAdded{ExecutorID: "1", Host: "h"},
			endpoints.JobStart{JobID: 1, NumTasks: 1},
			endpoints.TaskStart{JobID: 1, TaskID: 1, ExecutorID: "1"},
			endpoints.TaskEnd{JobID: 1, TaskID: 1, ExecutorID: "1", State: fin},
		},
		"centuries": {
			endpoints.ApplicationStart{AppID: "a", Time: t0},
			endpoints.JobStart{JobID: 1, NumTasks: 1, Time: t0},
			endpoints.TaskStart{JobID: 1, TaskID: 1, ExecutorID: "1", Time: t0},
			endpoints.TaskEnd{JobID: 1, TaskID: 1, ExecutorID: "1", State: fin, Time: time.Date(2250, 1, 1, 0, 0, 0, 0, time.UTC),
				Duration: 200 * 365 * 24 * time.Hour},
			endpoints.JobEnd{JobID: 1, Time: time.Date(2250, 1, 1, 0, 0, 0, 0, time.UTC)},
			endpoints.ApplicationEnd{Time: time.Date(2250, 1, 1, 0, 0, 0, 0, time.UTC)},
		},
	} {
		s := webui.NewAppStore()
		for _, ev := range evs {
			s.OnEvent(ev)
		}
		srv := webui.NewApplicationUI(s)
		for _, p := range []string{"/jobs/", "/jobs/job/?id=1"} {
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
			body := w.Body.String()
			if ticks := strings.Count(body, `class="tick"`); w.Code != http.StatusOK || ticks > 12 || len(body) > 64<<10 {
				t.Errorf("%s: %s = %d, %d bytes, %d ticks; want 200, a small page, at most 12 ticks", name, p, w.Code, len(body), ticks)
			}
		}
	}
}
