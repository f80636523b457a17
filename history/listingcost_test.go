package history_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// listingAllocates returns the bytes the first listing of dir allocates,
// and checks it lists want applications.
func listingAllocates(t *testing.T, dir string, want int) uint64 {
	t.Helper()
	var p *history.Provider
	b := testutil.AllocatedBytes(func() {
		var err error
		if p, err = history.NewProvider(history.Config{Dir: dir, RetainedApplications: 1, Logger: zerolog.Nop()}); err != nil {
			t.Fatal(err)
		}
	})
	defer p.Close()
	if n := len(p.Applications()); n != want {
		t.Fatalf("%d applications listed, want %d", n, want)
	}
	t.Logf("the listing of %d logs allocated %d KiB", want, b>>10)
	return b
}

// The listing of a folder of many small logs costs what they hold, not a
// megabyte a log. Before, each reading of a log took a 1 MiB buffer (and a
// zstd decoder's full buffers): 3,000 logs of three events cost 3.8 GB of
// allocation and 5 s before the history server served anything.
func TestListingManySmallLogsIsCheap(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	const logs = 300
	for i := range logs {
		id := fmt.Sprintf("app-%04d", i)
		w := eventlog.NewWriter(eventlog.Config{Dir: dir, Compress: i%2 == 0, QueueBytes: 1 << 20})
		if err := w.Start(id, ""); err != nil {
			t.Fatal(err)
		}
		w.OnEvent(endpoints.ApplicationStart{Time: now, AppID: id, AppName: "small"})
		w.OnEvent(endpoints.EnvironmentUpdate{Time: now, Properties: [][2]string{{"spark.app.name", "small"}}})
		w.OnEvent(endpoints.ApplicationEnd{Time: now})
		closeLog(t, w)
	}
	if b := listingAllocates(t, dir, logs); b > logs*64<<10 {
		t.Fatalf("listing %d small logs allocated %d MB, want under 64 KiB a log", logs, b>>20)
	}
}

// The listing of a log reads its application's start and end, not its
// tasks: listing a log of 20,000 tasks does not decode them. Before, every
// line of every log was decoded to list it: a 60 MB log took 1.3 s, a
// folder of them minutes, before the server answered.
func TestListingALargeLogDoesNotDecodeItsTasks(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now().Add(-time.Hour)
	const tasks = 20_000
	evs := []endpoints.Event{endpoints.ApplicationStart{Time: t0, AppID: "app-tasks", AppName: "tasks"},
		endpoints.ExecutorAdded{Time: t0, ExecutorID: "1", Host: "h1", Cores: 4},
		endpoints.JobStart{Time: t0, JobID: 1, TaskName: "t", NumTasks: tasks}}
	for i := range tasks {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		evs = append(evs, endpoints.TaskStart{Time: at, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: "1"},
			endpoints.TaskEnd{Time: at.Add(time.Millisecond), JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: "1",
				State: messages.TaskState_TASK_STATE_FINISHED, Duration: time.Millisecond})
	}
	evs = append(evs, endpoints.JobEnd{Time: t0.Add(time.Minute), JobID: 1}, endpoints.ApplicationEnd{Time: t0.Add(time.Minute)})
	writeLog(t, dir, "app-tasks", true, evs...)
	if b := listingAllocates(t, dir, 1); b > 4<<20 {
		t.Fatalf("listing one log of %d tasks allocated %d MB, want under 4 MiB", tasks, b>>20)
	}
}
