package webui_test

import (
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// BenchmarkTaskStarts replays 40,000 task starts of one job into a store,
// in id order and in reverse: a log's order should not decide the cost.
func BenchmarkTaskStarts(b *testing.B) {
	const n = 40_000
	for _, order := range []string{"ascending", "descending"} {
		b.Run("order="+order, func(b *testing.B) {
			for b.Loop() {
				s := webui.NewAppStore()
				s.OnEvent(endpoints.JobStart{JobID: 1, NumTasks: n, Time: time.Unix(1, 0)})
				for i := range int64(n) {
					id := i
					if order == "descending" {
						id = n - i
					}
					s.OnEvent(endpoints.TaskStart{JobID: 1, TaskID: id, Time: time.Unix(2, 0)})
				}
			}
		})
	}
}
