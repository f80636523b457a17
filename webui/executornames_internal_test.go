package webui

import (
	"strconv"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A long-running application whose executors come and go (dynamic
// allocation, executors lost and replaced) keeps what its retention says:
// the store's table of executor names does not grow with every executor
// the application ever had, only with those it still shows (live,
// retained dead ones, those of the task rows it keeps); and the rows it
// keeps still name their executors. Before, the table kept the id and host
// of every executor the application ever had, and every task page copied it.
func TestStoreForgetsTheNamesOfExecutorsLongGone(t *testing.T) {
	s := NewAppStore(WithRetainedJobs(5), WithRetainedDeadExecutors(10))
	at := func(i int) time.Time { return time.Unix(1_700_000_000, 0).Add(time.Duration(i) * time.Second) }
	const executors = 20_000
	for i := range executors {
		id := strconv.Itoa(i)
		s.OnEvent(endpoints.ExecutorAdded{Time: at(i), ExecutorID: id, Host: "host-" + id, Cores: 1})
		s.OnEvent(endpoints.JobStart{Time: at(i), JobID: int64(i), TaskName: "t", NumTasks: 1})
		s.OnEvent(endpoints.TaskStart{Time: at(i), JobID: int64(i), TaskID: int64(i), ExecutorID: id})
		s.OnEvent(endpoints.TaskEnd{Time: at(i), JobID: int64(i), TaskID: int64(i), ExecutorID: id, State: messages.TaskState_TASK_STATE_FINISHED})
		s.OnEvent(endpoints.JobEnd{Time: at(i), JobID: int64(i)})
		s.OnEvent(endpoints.ExecutorRemoved{Time: at(i), ExecutorID: id, Reason: "idle"})
	}
	s.mu.Lock()
	names, index := len(s.execIDs), len(s.execIndex)
	s.mu.Unlock()
	if bound := 2048; names > bound || index > bound {
		t.Fatalf("the store holds the names of %d executors (%d indexed) after %d came and went; it shows at most 10 removed ones and the executors of 5 jobs",
			names, index, executors)
	}
	for i := executors - 5; i < executors; i++ {
		rows, _, ok := s.tasksPage(int64(i), taskQuery{Length: 10}, at(executors))
		if !ok || len(rows) != 1 {
			t.Fatalf("job %d: %d rows, %v", i, len(rows), ok)
		}
		if id := strconv.Itoa(i); rows[0].ExecutorID != id || rows[0].Host != "host-"+id {
			t.Errorf("job %d's task ran on %s (%s), want %s (host-%s)", i, rows[0].ExecutorID, rows[0].Host, id, id)
		}
	}
}
