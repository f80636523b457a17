package eventlog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/messages"
)

// t0 is a time of whole milliseconds, as a log keeps them.
var t0 = time.UnixMilli(1_700_000_000_123)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// appEvents is one application's events, of every kind: executors added
// and removed, a job that succeeds and one that fails, tasks that finish,
// fail, are killed and lost.
func appEvents() []endpoints.Event {
	ms := time.Millisecond
	return []endpoints.Event{
		endpoints.ApplicationStart{Time: at(0), AppID: "app-1", AttemptID: "2", AppName: "Spark \"Pi\"\n", User: "ann",
			Version: "0.9.1", DriverHostPort: "10.0.0.1:7077", DriverLogURLs: map[string]string{"stdout": "http://h/out"}},
		endpoints.EnvironmentUpdate{Time: at(1), Properties: [][2]string{{"spark.app.name", "Pi"}, {"spark.authenticate.secret", "*********(redacted)"}},
			Runtime: map[string]string{"Go Version": "go1.26", "Platform": "linux/amd64"}},
		endpoints.ExecutorAdded{Time: at(2), ExecutorID: "1", Host: "h1", Address: actor.NewRpcAddress("h1", 4001), Cores: 2,
			LogURLs: map[string]string{"stderr": "http://h1/err"}, Attributes: map[string]string{"KUBERNETES_POD_NAME": "app-exec-1"}},
		endpoints.ExecutorAdded{Time: at(3), ExecutorID: "2", Host: "::1", Address: actor.NewRpcAddress("::1", 4002), Cores: 1},
		endpoints.JobStart{Time: at(10), JobID: 1, TaskName: "pi", NumTasks: 2},
		endpoints.TaskStart{Time: at(11), JobID: 1, TaskID: 0, Partition: 0, ExecutorID: "1"},
		endpoints.TaskStart{Time: at(11), JobID: 1, TaskID: 1, Partition: 1, ExecutorID: "2"},
		endpoints.TaskEnd{Time: at(20), JobID: 1, TaskID: 0, Partition: 0, ExecutorID: "1", State: messages.TaskState_TASK_STATE_FINISHED,
			Duration: 9 * ms, ResultSize: 8, RunTime: 7 * ms},
		endpoints.TaskEnd{Time: at(21), JobID: 1, TaskID: 1, Partition: 1, ExecutorID: "2", State: messages.TaskState_TASK_STATE_LOST,
			Error: "executor 2 lost: disassociated", Duration: 10 * ms},
		endpoints.ExecutorRemoved{Time: at(21), ExecutorID: "2", Reason: "disassociated"},
		endpoints.TaskStart{Time: at(22), JobID: 1, TaskID: 2, Partition: 1, Attempt: 1, ExecutorID: "1"},
		endpoints.TaskEnd{Time: at(30), JobID: 1, TaskID: 2, Partition: 1, Attempt: 1, ExecutorID: "1",
			State: messages.TaskState_TASK_STATE_FINISHED, Duration: 8 * ms, ResultSize: 8, RunTime: 6 * ms},
		endpoints.JobEnd{Time: at(31), JobID: 1, Duration: 21 * ms},
		endpoints.JobStart{Time: at(40), JobID: 2, TaskName: "fail", NumTasks: 1},
		endpoints.TaskStart{Time: at(41), JobID: 2, TaskID: 3, ExecutorID: "1"},
		endpoints.TaskEnd{Time: at(42), JobID: 2, TaskID: 3, ExecutorID: "1", State: messages.TaskState_TASK_STATE_FAILED,
			Error: "boom: \x00\t\"quoted\" \xff é", Duration: ms, RunTime: ms},
		endpoints.TaskStart{Time: at(43), JobID: 2, TaskID: 4, Attempt: 1, ExecutorID: "1"},
		endpoints.TaskEnd{Time: at(44), JobID: 2, TaskID: 4, Attempt: 1, ExecutorID: "1", State: messages.TaskState_TASK_STATE_KILLED,
			Error: "job cancelled", Duration: ms},
		endpoints.JobEnd{Time: at(45), JobID: 2, Err: errors.New("job 2 aborted: task 0 failed"), Duration: 5 * ms},
		endpoints.ApplicationEnd{Time: at(50), Error: "job 2 aborted"},
	}
}

// asRead returns ev as a log gives it back: errors as their text, invalid
// UTF-8 replaced.
func asRead(ev endpoints.Event) endpoints.Event {
	switch e := ev.(type) {
	case endpoints.TaskEnd:
		e.Error = strings.ToValidUTF8(e.Error, "\uFFFD")
		return e
	case endpoints.JobEnd:
		if e.Err != nil {
			e.Err = errors.New(e.Err.Error())
		}
		return e
	case endpoints.ExecutorAdded:
		if e.LogURLs == nil {
			e.LogURLs = map[string]string{}
		}
		return e
	}
	return ev
}

// collect is a listener that keeps what it receives.
type collect struct{ evs []endpoints.Event }

func (c *collect) OnEvent(ev endpoints.Event) { c.evs = append(c.evs, ev) }

func writeLog(t *testing.T, cfg eventlog.Config, evs []endpoints.Event) {
	t.Helper()
	w := eventlog.NewWriter(cfg)
	// The events before Start (and ApplicationStart) are held.
	w.OnEvent(evs[2])
	if err := w.Start("app-1", "2"); err != nil {
		t.Fatal(err)
	}
	w.OnEvent(evs[3])
	w.OnEvent(evs[0])
	w.OnEvent(evs[1])
	for _, ev := range evs[4:] {
		w.OnEvent(ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := w.Dropped(); n != 0 {
		t.Fatalf("Dropped = %d", n)
	}
}

func TestEveryEventRoundTripsInEveryLayout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   eventlog.Config
		files []string // what the folder holds, by pattern
	}{
		{"single", eventlog.Config{}, []string{"app-1_2"}},
		{"compressed", eventlog.Config{Compress: true}, []string{"app-1_2.zstd"}},
		{"rolling", eventlog.Config{Rolling: true, MaxFileSize: 600},
			[]string{"eventlog_v2_app-1_2/appstatus_app-1_2", "eventlog_v2_app-1_2/events_1_app-1_2", "eventlog_v2_app-1_2/events_4_app-1_2"}},
		{"rolling compressed", eventlog.Config{Rolling: true, MaxFileSize: 600, Compress: true},
			[]string{"eventlog_v2_app-1_2/appstatus_app-1_2", "eventlog_v2_app-1_2/events_1_app-1_2.zstd", "eventlog_v2_app-1_2/events_4_app-1_2.zstd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.cfg.Dir = dir
			evs := appEvents()
			writeLog(t, tc.cfg, evs)
			for _, f := range tc.files {
				st, err := os.Stat(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if perm := st.Mode().Perm(); perm&0o137 != 0 {
					t.Errorf("%s: mode %v, want at most 0640", f, perm)
				}
			}
			logs, err := eventlog.List(dir)
			if err != nil || len(logs) != 1 {
				t.Fatalf("List = %v, %v", logs, err)
			}
			in := logs[0]
			if in.AppID != "app-1" || in.AttemptID != "2" || in.InProgress || in.Rolling != tc.cfg.Rolling ||
				in.Compressed != tc.cfg.Compress || in.Size == 0 || in.ModTime.IsZero() {
				t.Fatalf("List = %+v", in)
			}
			var c collect
			res, err := eventlog.Replay(in.Path, &c)
			if err != nil || res.Skipped != 0 || res.Events != len(evs) {
				t.Fatalf("Replay = %+v, %v; want %d events", res, err, len(evs))
			}
			// ApplicationStart first, then the events held before it.
			want := append([]endpoints.Event{evs[0], evs[2], evs[3], evs[1]}, evs[4:]...)
			for i := range want {
				if w := asRead(want[i]); !reflect.DeepEqual(c.evs[i], w) {
					t.Errorf("event %d:\n got %#v\nwant %#v", i, c.evs[i], w)
				}
			}
		})
	}
}

func TestStartFailsOnAnExistingLogUnlessOverwrite(t *testing.T) {
	for _, rolling := range []bool{false, true} {
		dir := t.TempDir()
		cfg := eventlog.Config{Dir: dir, Rolling: rolling}
		writeLog(t, cfg, appEvents())
		w := eventlog.NewWriter(cfg)
		err := w.Start("app-1", "2")
		if !errors.Is(err, eventlog.ErrLogExists) || !strings.Contains(err.Error(), eventlog.KeyOverwrite) {
			t.Fatalf("rolling=%v: Start = %v; want ErrLogExists naming %s", rolling, err, eventlog.KeyOverwrite)
		}
		cfg.Overwrite = true
		writeLog(t, cfg, appEvents())
	}
	w := eventlog.NewWriter(eventlog.Config{Dir: filepath.Join(t.TempDir(), "missing")})
	if err := w.Start("a", ""); err == nil || !strings.Contains(err.Error(), eventlog.KeyDir) {
		t.Fatalf("Start in a missing folder = %v; want an error naming %s", err, eventlog.KeyDir)
	}
	// A Writer never started has nothing to close.
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestConfigFrom(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kv      map[string]string
		enabled bool
		want    eventlog.Config
		err     string // a part of the error
	}{
		{"off", nil, false, eventlog.Config{}, ""},
		{"defaults", map[string]string{eventlog.KeyEnabled: "true"}, true,
			eventlog.Config{Dir: "/tmp/spark-events", Compress: true, MaxFileSize: 128 << 20, BufferSize: 100 << 10}, ""},
		{"plain path", map[string]string{eventlog.KeyEnabled: "true", eventlog.KeyDir: "/x/y", eventlog.KeyCompress: "false",
			eventlog.KeyRollingEnabled: "true", eventlog.KeyRollingMaxFileSize: "10m", eventlog.KeyOverwrite: "true", eventlog.KeyBufferKB: "8k"},
			true, eventlog.Config{Dir: "/x/y", Rolling: true, MaxFileSize: 10 << 20, Overwrite: true, BufferSize: 8 << 10}, ""},
		{"file URI", map[string]string{eventlog.KeyEnabled: "true", eventlog.KeyDir: "file:///x/y"}, true,
			eventlog.Config{Dir: "/x/y", Compress: true, MaxFileSize: 128 << 20, BufferSize: 100 << 10}, ""},
		{"hdfs", map[string]string{eventlog.KeyEnabled: "true", eventlog.KeyDir: "hdfs://nn/logs"}, false, eventlog.Config{}, eventlog.KeyDir},
		{"lz4", map[string]string{eventlog.KeyEnabled: "true", eventlog.KeyCompressionCodec: "lz4"}, false, eventlog.Config{}, eventlog.KeyCompressionCodec},
		{"small rolling", map[string]string{eventlog.KeyEnabled: "true", eventlog.KeyRollingEnabled: "true", eventlog.KeyRollingMaxFileSize: "1m"},
			false, eventlog.Config{}, eventlog.KeyRollingMaxFileSize},
		{"bad bool", map[string]string{eventlog.KeyEnabled: "yes please"}, false, eventlog.Config{}, eventlog.KeyEnabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			for k, v := range tc.kv {
				conf.Set(k, v)
			}
			enabled, cfg, err := eventlog.ConfigFrom(conf)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ConfigFrom = %v; want an error naming %s", err, tc.err)
				}
				return
			}
			if err != nil || enabled != tc.enabled || cfg != tc.want {
				t.Fatalf("ConfigFrom = %v, %+v, %v; want %v, %+v", enabled, cfg, err, tc.enabled, tc.want)
			}
		})
	}
}

func TestAbsDir(t *testing.T) {
	conf := actor.NewConf().Set(eventlog.KeyDir, "logs")
	eventlog.AbsDir(conf)
	wd, _ := os.Getwd()
	if got := conf.Get(eventlog.KeyDir, ""); got != filepath.Join(wd, "logs") {
		t.Fatalf("AbsDir: %q", got)
	}
	conf.Set(eventlog.KeyDir, "file:/abs")
	eventlog.AbsDir(conf)
	if got := conf.Get(eventlog.KeyDir, ""); got != "file:/abs" {
		t.Fatalf("AbsDir changed an absolute URI: %q", got)
	}
}
