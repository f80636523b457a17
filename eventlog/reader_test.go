package eventlog_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
)

// logBytes returns the bytes of a finished single-file log of appEvents.
func logBytes(t *testing.T, compress bool) []byte {
	t.Helper()
	dir := t.TempDir()
	writeLog(t, eventlog.Config{Dir: dir, Compress: compress}, appEvents())
	name := "app-1_2"
	if compress {
		name += ".zstd"
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCorruptAndTruncatedLinesAreSkippedAndReported(t *testing.T) {
	good := logBytes(t, false)
	// A corrupt line in the middle, and the start of a line at the end
	// (the writer stopped in the middle of it).
	b := append([]byte{}, good[:len(good)/2]...)
	cut := len(b)
	for b[cut-1] != '\n' {
		cut--
	}
	b = append(b[:cut], "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":\"one\"}\nnot json\n"...)
	b = append(b, good[cut:]...)
	b = append(b, `{"Event":"SparkListenerJobStart","Job`...)
	p := filepath.Join(t.TempDir(), "app-1_2.inprogress")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var c collect
	res, err := eventlog.Replay(p, &c)
	n := len(appEvents())
	if err != nil || res.Events != n || res.Skipped != 3 || len(c.evs) != n {
		t.Fatalf("Replay = %+v, %v; want %d events and 3 lines skipped", res, err, n)
	}
	lines := 0
	for _, x := range b[:cut] {
		if x == '\n' {
			lines++
		}
	}
	if res.Problems[0].Line != lines+1 || res.Problems[1].Line != lines+2 || !errors.Is(res.Problems[2].Err, eventlog.ErrTruncated) {
		t.Fatalf("problems %v; want lines %d and %d, then a truncated line", res.Problems, lines+1, lines+2)
	}
	// Followed while in progress, the unended line waits for its end.
	var f collect
	lg := eventlog.Open(p)
	if res, err := lg.Update(&f); err != nil || res.Skipped != 2 || res.Events != n {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	appendFile(t, p, []byte(" ID\":9,\"Submission Time\":1}\n"))
	res, err = lg.Update(&f)
	if err != nil || res.Events != 1 || res.Skipped != 0 {
		t.Fatalf("Update after the line ended = %+v, %v; want its event", res, err)
	}
	if js, ok := f.evs[n].(endpoints.JobStart); !ok || js.JobID != 9 {
		t.Fatalf("last event %#v", f.evs[n])
	}
}

func appendFile(t *testing.T, p string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateDeliversOnlyTheNewLines(t *testing.T) {
	for _, compress := range []bool{false, true} {
		full := logBytes(t, compress)
		name := "app-1_2"
		if compress {
			name += ".zstd"
		}
		dir := t.TempDir()
		final := filepath.Join(dir, name)
		p := final + ".inprogress"
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		lg := eventlog.Open(final)
		var c collect
		total := 0
		for off := 0; off < len(full); {
			next := min(len(full), off+97)
			appendFile(t, p, full[off:next])
			off = next
			res, err := lg.Update(&c)
			if err != nil || res.Skipped != 0 {
				t.Fatalf("compress=%v: Update at %d = %+v, %v", compress, off, res, err)
			}
			total += res.Events
		}
		if err := os.Rename(p, final); err != nil {
			t.Fatal(err)
		}
		res, err := lg.Update(&c)
		if err != nil || res.Events != 0 || res.Skipped != 0 {
			t.Fatalf("Update of the finished log = %+v, %v; want nothing new", res, err)
		}
		want := appEvents()
		if total != len(want) || len(c.evs) != len(want) {
			t.Fatalf("compress=%v: %d events delivered, want %d", compress, total, len(want))
		}
		if _, ok := c.evs[0].(endpoints.ApplicationStart); !ok {
			t.Fatalf("first event %#v", c.evs[0])
		}
	}
}

func TestUpdateFollowsARollingLog(t *testing.T) {
	src := t.TempDir()
	writeLog(t, eventlog.Config{Dir: src, Rolling: true, MaxFileSize: 600}, appEvents())
	from := filepath.Join(src, "eventlog_v2_app-1_2")
	to := filepath.Join(t.TempDir(), "eventlog_v2_app-1_2")
	if err := os.Mkdir(to, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, "appstatus_app-1_2.inprogress"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(from)
	lg := eventlog.Open(to)
	var c collect
	files := 0
	for i := 1; ; i++ {
		n := "events_" + strconv.Itoa(i) + "_app-1_2"
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			break
		}
		files++
		if err := os.WriteFile(filepath.Join(to, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if res, err := lg.Update(&c); err != nil || res.Skipped != 0 || res.Events == 0 {
			t.Fatalf("Update after file %d = %+v, %v", i, res, err)
		}
		infos, err := eventlog.List(filepath.Dir(to))
		if err != nil || len(infos) != 1 || !infos[0].InProgress || !infos[0].Rolling || infos[0].AppID != "app-1" {
			t.Fatalf("List = %+v, %v", infos, err)
		}
	}
	if files < 3 || len(ents) != files+1 || len(c.evs) != len(appEvents()) {
		t.Fatalf("%d files of %d entries, %d events", files, len(ents), len(c.evs))
	}
}

// List reads little of each log whatever its first line: a log starting
// with a 32 MiB line costs it a bounded read, and the log is still listed
// (by its file's name).
func TestListPeeksABoundedStart(t *testing.T) {
	dir := t.TempDir()
	huge := append(bytes.Repeat([]byte("x"), 32<<20), '\n')
	if err := os.WriteFile(filepath.Join(dir, "app-huge"), huge, 0o640); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	logs, err := eventlog.List(dir)
	runtime.ReadMemStats(&after)
	if err != nil || len(logs) != 1 || logs[0].AppID != "app-huge" {
		t.Fatalf("List = %+v, %v", logs, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2<<20 {
		t.Fatalf("List allocated %d bytes for a log starting with a 32 MiB line", n)
	}
}

// A finished compressed log whose stream stops short (a copy cut off, a
// disk that filled) is read as far as it goes and reported truncated, once;
// while it is in progress the same is only what was written so far.
func TestCompressedLogCutShortIsReported(t *testing.T) {
	good := logBytes(t, true)
	cut := good[:len(good)/2]
	dir := t.TempDir()
	finished := filepath.Join(dir, "app-1_2.zstd")
	if err := os.WriteFile(finished, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	var c collect
	lg := eventlog.Open(finished)
	res, err := lg.Update(&c)
	if err != nil || len(res.Problems) != 1 || !errors.Is(res.Problems[0].Err, eventlog.ErrTruncated) || res.Events >= len(appEvents()) {
		t.Fatalf("Update of a cut compressed log = %+v, %v; want what it holds and one truncation", res, err)
	}
	if res, err := lg.Update(&c); err != nil || len(res.Problems) != 0 {
		t.Fatalf("a second Update = %+v, %v; want the truncation reported once", res, err)
	}
	// A log of many blocks, cut in one: the line it cuts is reported,
	// once, and nothing else.
	evs := appEvents()
	for i := range 20000 {
		evs = append(evs, endpoints.JobStart{Time: time.UnixMilli(int64(i)), JobID: int64(100 + i), TaskName: "many", NumTasks: 1})
	}
	big := t.TempDir()
	writeLog(t, eventlog.Config{Dir: big, Compress: true}, evs)
	whole, err := os.ReadFile(filepath.Join(big, "app-1_2.zstd"))
	if err != nil {
		t.Fatal(err)
	}
	many := filepath.Join(dir, "app-5_6.zstd")
	if err := os.WriteFile(many, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	lg = eventlog.Open(many)
	if res, err := lg.Update(&c); err != nil || len(res.Problems) != 1 || !errors.Is(res.Problems[0].Err, eventlog.ErrTruncated) || res.Events == 0 {
		t.Fatalf("Update of a cut log of many blocks = %d events, %v, %v; want some events and one truncation", res.Events, res.Problems, err)
	}
	if res, err := lg.Update(&c); err != nil || len(res.Problems) != 0 {
		t.Fatalf("a second Update of it = %+v, %v; want nothing more reported", res, err)
	}
	running := filepath.Join(dir, "app-3_4.zstd.inprogress")
	if err := os.WriteFile(running, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := eventlog.Open(running).Update(&c); err != nil || len(res.Problems) != 0 {
		t.Fatalf("Update of a compressed log in progress = %+v, %v; want no problem", res, err)
	}
}
