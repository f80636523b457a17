package eventlog

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// writeTasksLog writes, without a Writer, the log of an application of
// one job of tasks tasks on 8 executors, and returns its path.
func writeTasksLog(tb testing.TB, dir string, tasks int) string {
	tb.Helper()
	p := filepath.Join(dir, "app-big")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var enc encoder
	var b []byte
	now := time.Now()
	b = appendLogStart(b, "test")
	b = enc.appendEvent(b, endpoints.ApplicationStart{Time: now, AppID: "app-big", AppName: "big"})
	for e := range 8 {
		b = enc.appendEvent(b, endpoints.ExecutorAdded{Time: now, ExecutorID: itoa(e), Host: "host-" + itoa(e), Cores: 4})
	}
	b = enc.appendEvent(b, endpoints.JobStart{Time: now, JobID: 1, TaskName: "work", NumTasks: tasks})
	for i := range tasks {
		exec := itoa(i % 8)
		b = enc.appendEvent(b, endpoints.TaskStart{Time: now, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: exec})
		b = enc.appendEvent(b, endpoints.TaskEnd{Time: now, JobID: 1, TaskID: int64(i), Partition: i, ExecutorID: exec,
			State: messages.TaskState_TASK_STATE_FINISHED, Duration: time.Millisecond, RunTime: time.Millisecond, ResultSize: 120})
		if len(b) > 1<<16 {
			_, _ = bw.Write(b)
			b = b[:0]
		}
	}
	b = enc.appendEvent(b, endpoints.JobEnd{Time: now, JobID: 1})
	b = enc.appendEvent(b, endpoints.ApplicationEnd{Time: now})
	_, _ = bw.Write(b)
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestReplayOfAHundredThousandTasks reports how long decoding the log of
// 100,000 tasks (200,000 task events) takes; the figure is logged, not
// asserted.
func TestReplayOfAHundredThousandTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MB log")
	}
	const tasks = 100_000
	p := writeTasksLog(t, t.TempDir(), tasks)
	st, _ := os.Stat(p)
	ends := 0
	start := time.Now()
	res, err := Replay(p, endpoints.ListenerFunc(func(ev endpoints.Event) {
		if _, ok := ev.(endpoints.TaskEnd); ok {
			ends++
		}
	}))
	took := time.Since(start)
	if err != nil || res.Skipped != 0 || res.Events != 2*tasks+12 || ends != tasks {
		t.Fatalf("Replay = %+v, %v, %d TaskEnd; want %d events", res, err, ends, 2*tasks+12)
	}
	t.Logf("replayed %d events (%d MB) in %v: %.0f events/s", res.Events, st.Size()>>20, took.Round(time.Millisecond),
		float64(res.Events)/took.Seconds())
}

func BenchmarkReplay(b *testing.B) {
	p := writeTasksLog(b, b.TempDir(), 10_000)
	st, _ := os.Stat(p)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Replay(p, endpoints.ListenerFunc(func(endpoints.Event) {})); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	now := time.Now()
	enc := encoder{hosts: map[string]string{"1": "host-1"}}
	for _, bc := range []struct {
		name string
		ev   endpoints.Event
	}{
		{"TaskStart", endpoints.TaskStart{Time: now, JobID: 1, TaskID: 12345, Partition: 17, ExecutorID: "1"}},
		{"TaskEnd", endpoints.TaskEnd{Time: now, JobID: 1, TaskID: 12345, Partition: 17, ExecutorID: "1",
			State: messages.TaskState_TASK_STATE_FINISHED, Duration: time.Millisecond, RunTime: time.Millisecond, ResultSize: 8}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = enc.appendEvent(buf[:0], bc.ev)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkOnEvent is the cost of the Writer to the listener bus.
func BenchmarkOnEvent(b *testing.B) {
	w := NewWriter(Config{Dir: b.TempDir()})
	if err := w.Start("app", ""); err != nil {
		b.Fatal(err)
	}
	w.OnEvent(endpoints.ApplicationStart{Time: time.Now(), AppID: "app"})
	ev := endpoints.TaskEnd{Time: time.Now(), JobID: 1, TaskID: 12345, Partition: 17, ExecutorID: "1",
		State: messages.TaskState_TASK_STATE_FINISHED, Duration: time.Millisecond, RunTime: time.Millisecond, ResultSize: 8}
	b.ReportAllocs()
	for b.Loop() {
		w.OnEvent(ev)
	}
	b.StopTimer()
	if err := w.Close(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.Dropped()), "dropped")
}
