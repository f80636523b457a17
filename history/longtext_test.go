package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A compressed event log of a few kilobytes does not make the history
// server keep a hundred times its size in memory: each of its lines may
// decompress to 16 MiB (eventlog.MaxLineSize), and a store keeps a failed
// task's error for each of up to spark.ui.retainedTasks task attempts, so
// a store keeps at most webui.MaxErrorText of an error. Before, it kept
// each whole: 4,248 times the log's size here.
func TestCompressedLogDoesNotAmplifyIntoTheStore(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	const tasks, errLen = 8, 2 << 20
	huge := strings.Repeat("x", errLen)
	w := eventlog.NewWriter(eventlog.Config{Dir: dir, Compress: true, QueueBytes: 1 << 30})
	if err := w.Start("app-bomb", ""); err != nil {
		t.Fatal(err)
	}
	w.OnEvent(endpoints.ApplicationStart{Time: now, AppID: "app-bomb", AppName: "bomb"})
	w.OnEvent(endpoints.JobStart{Time: now, JobID: 0, TaskName: "t", NumTasks: tasks})
	for i := range tasks {
		w.OnEvent(endpoints.TaskEnd{Time: now, JobID: 0, TaskID: int64(i), Partition: i, ExecutorID: "1",
			State: messages.TaskState_TASK_STATE_FAILED, Error: huge})
	}
	w.OnEvent(endpoints.ApplicationEnd{Time: now})
	closeLog(t, w)
	logs, err := eventlog.List(dir)
	if err != nil || len(logs) != 1 {
		t.Fatalf("List = %v, %v", logs, err)
	}
	onDisk := logs[0].Size

	_, hs := historyServer(t, dir)
	var got []struct {
		ErrorMessage string `json:"errorMessage"`
	}
	getJSON(t, hs.URL+"/api/v1/applications/app-bomb/stages/0/0/taskList?length=1000", &got)
	kept := 0
	for _, td := range got {
		kept += len(td.ErrorMessage)
	}
	if limit := 100 * onDisk; int64(kept) > limit {
		t.Fatalf("a %d-byte compressed log made the history server keep %d bytes (%.0f×) of task errors in memory "+
			"(%d tasks × %d bytes); a store's text is bounded by nothing but the log's decompressed size",
			onDisk, kept, float64(kept)/float64(onDisk), len(got), errLen)
	}
}
