package history_test

import (
	"fmt"
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

// writeCompressed writes events as appID's finished, compressed log in dir
// and returns its size on disk.
func writeCompressed(t *testing.T, dir, appID string, events ...endpoints.Event) int64 {
	t.Helper()
	w := eventlog.NewWriter(eventlog.Config{Dir: dir, Compress: true, QueueBytes: 1 << 30})
	if err := w.Start(appID, ""); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		w.OnEvent(ev)
	}
	closeLog(t, w)
	logs, err := eventlog.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range logs {
		if in.AppID == appID {
			return in.Size
		}
	}
	t.Fatalf("no log of %s in %v", appID, logs)
	return 0
}

// As TestCompressedLogDoesNotAmplifyIntoTheStore, for the texts of an
// executor: a store keeps at most webui.MaxNameText of its id, host and
// each log URL, and 64 log URLs and attributes. Before, it kept them whole
// for every executor: 2,130 times the log's size here.
func TestCompressedLogDoesNotAmplifyIntoExecutors(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	const executors, textLen = 8, 2 << 20
	huge := strings.Repeat("x", textLen)
	events := []endpoints.Event{endpoints.ApplicationStart{Time: now, AppID: "app-bomb", AppName: "bomb"}}
	for i := range executors {
		events = append(events, endpoints.ExecutorAdded{Time: now, ExecutorID: fmt.Sprint(i + 1), Host: huge,
			Cores: 1, LogURLs: map[string]string{"stdout": huge}})
	}
	events = append(events, endpoints.ApplicationEnd{Time: now})
	onDisk := writeCompressed(t, dir, "app-bomb", events...)

	_, hs := historyServer(t, dir)
	var got []struct {
		HostPort     string            `json:"hostPort"`
		ExecutorLogs map[string]string `json:"executorLogs"`
	}
	getJSON(t, hs.URL+"/api/v1/applications/app-bomb/allexecutors", &got)
	kept := 0
	for _, ex := range got {
		kept += len(ex.HostPort)
		for _, u := range ex.ExecutorLogs {
			kept += len(u)
		}
	}
	if limit := 100 * onDisk; int64(kept) > limit {
		t.Fatalf("a %d-byte compressed log made the history server keep %d bytes (%.0f×) of executor hosts and log URLs",
			onDisk, kept, float64(kept)/float64(onDisk))
	}
}

// The list keeps a summary of every log of the folder, however many
// (spark.history.retainedApplications bounds stores only): it keeps what
// the list shows, clipped, and not a hundred times the log's size. Before,
// it kept the application's start whole, its user and driver's log URLs
// with it: 1,514 times the log's size here.
func TestCompressedLogDoesNotAmplifyIntoTheList(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	huge := strings.Repeat("x", 4<<20) // three of them in one line, under eventlog.MaxLineSize
	onDisk := writeCompressed(t, dir, "app-bomb", endpoints.ApplicationStart{Time: now, AppID: "app-bomb", AppName: "bomb",
		User: huge, DriverHostPort: huge, DriverLogURLs: map[string]string{"stdout": huge}},
		endpoints.ApplicationEnd{Time: now})

	_, hs := historyServer(t, dir)
	_, body := get(t, hs.URL+"/api/v1/applications")
	if limit := 100 * onDisk; int64(len(body)) > limit {
		t.Fatalf("a %d-byte compressed log made the list of applications %d bytes (%.0f×): its user is kept whole",
			onDisk, len(body), float64(len(body))/float64(onDisk))
	}
}
