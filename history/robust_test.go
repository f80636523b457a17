package history_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/webui"
)

// A log line no store expects (a job of -1 tasks) neither kills nor
// freezes the server: the application's pages answer, and the list after
// them.
func TestHostileLineLeavesTheServerServing(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-hostile", true, endpoints.ApplicationStart{Time: now, AppID: "app-hostile", AppName: "hostile"})
	logs, err := eventlog.List(dir)
	if err != nil || len(logs) != 1 {
		t.Fatalf("List = %v, %v", logs, err)
	}
	f, err := os.OpenFile(logs[0].Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":1,\"Submission Time\":%d,\"Number of Tasks\":-1,\"Task Name\":\"t\"}\n", now.UnixMilli())
	f.Close()
	_, hs := historyServer(t, dir)
	if code, body := get(t, hs.URL+"/history/app-hostile/jobs/"); code != 200 {
		t.Fatalf("jobs page = %d:\n%s", code, body)
	}
	done := make(chan int, 1)
	go func() {
		code, _ := get(t, hs.URL+"/api/v1/applications")
		done <- code
	}()
	select {
	case code := <-done:
		if code != 200 {
			t.Fatalf("the list after the hostile log = %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the list did not answer after the hostile log was viewed")
	}
}

// Two logs of one application (a run killed with its log in progress, and
// a rerun that finished, compressed) are listed as one: the one written
// last.
func TestTwoLogsOfOneApplicationAreListedOnce(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	now := time.Now()
	// The killed run's log, as its driver left it.
	crashed := fmt.Sprintf("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"x\"}\n"+
		"{\"Event\":\"SparkListenerApplicationStart\",\"App ID\":\"app-twice\",\"App Name\":\"first run\",\"Timestamp\":%d}\n",
		now.UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, "app-twice.inprogress"), []byte(crashed), 0o640); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "app-twice.inprogress"), old, old); err != nil {
		t.Fatal(err)
	}
	// The rerun's, written elsewhere and moved in.
	w := eventlog.NewWriter(eventlog.Config{Dir: elsewhere, Compress: true, QueueBytes: 1 << 20})
	if err := w.Start("app-twice", ""); err != nil {
		t.Fatal(err)
	}
	w.OnEvent(endpoints.ApplicationStart{Time: now.Add(time.Minute), AppID: "app-twice", AppName: "second run"})
	w.OnEvent(endpoints.ApplicationEnd{Time: now.Add(2 * time.Minute)})
	closeLog(t, w)
	if err := os.Rename(filepath.Join(elsewhere, "app-twice.zstd"), filepath.Join(dir, "app-twice.zstd")); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	var apps []webui.ApplicationInfo
	getJSON(t, hs.URL+"/api/v1/applications", &apps)
	if len(apps) != 1 || apps[0].Name != "second run" || !apps[0].Attempts[0].Completed {
		t.Fatalf("applications = %+v", apps)
	}
	if code, body := get(t, hs.URL+"/history/app-twice/jobs/"); code != 200 || !strings.Contains(body, "second run") {
		t.Fatalf("jobs page = %d:\n%s", code, body)
	}
}

// A log replaced by a shorter one (spark.eventLog.overwrite) is read again
// from its start: the list and the pages show the new run alone.
func TestReplacedLogIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var evs []endpoints.Event
	evs = append(evs, endpoints.ApplicationStart{Time: now, AppID: "app-again", AppName: "long first run"})
	for j := range 20 {
		evs = append(evs, endpoints.JobStart{Time: now, JobID: int64(j), TaskName: "t", NumTasks: 1}, endpoints.JobEnd{Time: now, JobID: int64(j)})
	}
	writeLog(t, dir, "app-again", true, append(evs, endpoints.ApplicationEnd{Time: now})...)
	p, hs := historyServer(t, dir)
	var jobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/app-again/jobs", &jobs)
	if len(jobs) != 20 {
		t.Fatalf("first run: %d jobs", len(jobs))
	}
	w := eventlog.NewWriter(eventlog.Config{Dir: dir, Overwrite: true, QueueBytes: 1 << 20})
	if err := w.Start("app-again", ""); err != nil {
		t.Fatal(err)
	}
	w.OnEvent(endpoints.ApplicationStart{Time: now.Add(time.Hour), AppID: "app-again", AppName: "short rerun"})
	w.OnEvent(endpoints.JobStart{Time: now, JobID: 0, TaskName: "t", NumTasks: 1})
	w.OnEvent(endpoints.JobEnd{Time: now, JobID: 0})
	w.OnEvent(endpoints.ApplicationEnd{Time: now.Add(time.Hour)})
	closeLog(t, w)
	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	var apps []webui.ApplicationInfo
	getJSON(t, hs.URL+"/api/v1/applications", &apps)
	if len(apps) != 1 || apps[0].Name != "short rerun" {
		t.Fatalf("applications after the rerun = %+v", apps)
	}
	getJSON(t, hs.URL+"/api/v1/applications/app-again/jobs", &jobs)
	if len(jobs) != 1 {
		t.Fatalf("after the rerun: %d jobs, want 1", len(jobs))
	}
}

// A log with nothing to show (an empty file, a compressed one cut before
// its first event) is not listed, so the list never links to an
// application whose pages do not exist; a finished log cut in the middle
// of a line is listed complete, ended when it was last written, not
// running for ever.
func TestLogsWithoutAStartAreNotListedAndCutLogsEnd(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Add(-time.Hour)
	writeLog(t, dir, "app-good", true, endpoints.ApplicationStart{Time: now, AppID: "app-good", AppName: "good"},
		endpoints.ApplicationEnd{Time: now.Add(time.Minute)})
	if err := os.WriteFile(filepath.Join(dir, "app-empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cutLine := fmt.Sprintf("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"x\"}\n"+
		"{\"Event\":\"SparkListenerApplicationStart\",\"App ID\":\"app-cut\",\"App Name\":\"cut\",\"Timestamp\":%d}\n"+
		"{\"Event\":\"SparkListenerJobStart\",\"Job", now.UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, "app-cut"), []byte(cutLine), 0o600); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	var apps []struct {
		ID       string `json:"id"`
		Attempts []struct {
			Completed bool  `json:"completed"`
			Duration  int64 `json:"duration"`
		} `json:"attempts"`
	}
	code, body := get(t, hs.URL+"/api/v1/applications")
	if err := json.Unmarshal([]byte(body), &apps); code != 200 || err != nil {
		t.Fatalf("GET /api/v1/applications = %d %v\n%s", code, err, body)
	}
	ids := map[string]bool{}
	for _, a := range apps {
		ids[a.ID] = true
		if a.ID == "app-cut" && (!a.Attempts[0].Completed || a.Attempts[0].Duration <= 0) {
			t.Errorf("the cut log: %+v; want it complete, with a duration", a.Attempts[0])
		}
	}
	if !ids["app-good"] || !ids["app-cut"] || ids["app-empty"] || len(apps) != 2 {
		t.Fatalf("listed %v; want app-good and app-cut", ids)
	}
	if code, _ := get(t, hs.URL+"/api/v1/applications/app-empty"); code != 404 {
		t.Errorf("the empty log's application = %d, want 404", code)
	}
	// The cut application's own API says what the list says.
	var one struct {
		Attempts []struct {
			Completed bool `json:"completed"`
		} `json:"attempts"`
	}
	code, body = get(t, hs.URL+"/api/v1/applications/app-cut")
	if err := json.Unmarshal([]byte(body), &one); code != 200 || err != nil || len(one.Attempts) != 1 || !one.Attempts[0].Completed {
		t.Errorf("GET /api/v1/applications/app-cut = %d %v\n%s; want it complete", code, err, body)
	}
}

// A finished log that is still being copied into the folder when the
// server reads it (its last line, or its compressed stream, cut short) is
// read again whole once the copy has ended: every job shows, and the page
// no longer says that lines could not be read.
func TestLogCopiedInIsReadWholeOnceCopied(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compressed=%v", compress), func(t *testing.T) {
			src, dir := t.TempDir(), t.TempDir()
			now := time.Now()
			evs := []endpoints.Event{endpoints.ApplicationStart{Time: now, AppID: "app-copied", AppName: "copied"}}
			// Enough jobs that half of the compressed stream holds some.
			const n = 4000
			for j := range n {
				evs = append(evs, endpoints.JobStart{Time: now, JobID: int64(j), TaskName: "t", NumTasks: 1}, endpoints.JobEnd{Time: now, JobID: int64(j)})
			}
			w := eventlog.NewWriter(eventlog.Config{Dir: src, Compress: compress, QueueBytes: 1 << 30})
			if err := w.Start("app-copied", ""); err != nil {
				t.Fatal(err)
			}
			for _, ev := range append(evs, endpoints.ApplicationEnd{Time: now}) {
				w.OnEvent(ev)
			}
			closeLog(t, w)
			logs, err := eventlog.List(src)
			if err != nil || len(logs) != 1 {
				t.Fatalf("List = %v, %v", logs, err)
			}
			whole, err := os.ReadFile(logs[0].Path)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, filepath.Base(logs[0].Path))
			// Half of it, cut in the middle of a line (or of the stream).
			if err := os.WriteFile(dst, whole[:len(whole)/2+3], 0o600); err != nil {
				t.Fatal(err)
			}
			p, hs := historyServer(t, dir)
			var jobs []jobFigures
			getJSON(t, hs.URL+"/api/v1/applications/app-copied/jobs", &jobs)
			if len(jobs) == 0 || hasJob(jobs, n-1) {
				t.Fatalf("half of the log: %d jobs, the last among them: %v; want some, not the last", len(jobs), hasJob(jobs, n-1))
			}
			// The copy ends.
			if err := os.WriteFile(dst, whole, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(dst, now.Add(time.Minute), now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := p.Refresh(); err != nil {
				t.Fatal(err)
			}
			getJSON(t, hs.URL+"/api/v1/applications/app-copied/jobs", &jobs)
			if !hasJob(jobs, n-1) {
				t.Errorf("the whole log: %d jobs, without the last", len(jobs))
			}
			if code, body := get(t, hs.URL+"/history/app-copied/jobs/"); code != 200 || strings.Contains(body, "Not all of this application") {
				t.Errorf("jobs page of the whole log = %d, still says lines could not be read:\n%.2000s", code, body)
			}
			if code, body := get(t, hs.URL+"/"); code != 200 || strings.Contains(body, "Not all") || strings.Contains(body, "truncated") {
				t.Errorf("the list of the whole log = %d, still names a problem:\n%.2000s", code, body)
			}
		})
	}
}

// hasJob reports whether jobs holds job id.
func hasJob(jobs []jobFigures, id int64) bool {
	return slices.ContainsFunc(jobs, func(j jobFigures) bool { return j.JobID == id })
}
