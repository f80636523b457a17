package eventlog

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// stuckWriter blocks every Write until release is closed; stuck is closed
// when the first Write blocks.
type stuckWriter struct {
	w              io.Writer
	stuck, release chan struct{}
	once           bool
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	if !s.once {
		s.once = true
		close(s.stuck)
	}
	<-s.release
	return s.w.Write(p)
}

func TestAStuckDiskMakesOnEventDropAndCountInsteadOfWaiting(t *testing.T) {
	stuck, release := make(chan struct{}), make(chan struct{})
	w := NewWriter(Config{Dir: t.TempDir(), BufferSize: 16, QueueBytes: 4 << 10})
	w.wrap = func(f io.Writer) io.Writer { return &stuckWriter{w: f, stuck: stuck, release: release} }
	if err := w.Start("app", ""); err != nil {
		t.Fatal(err)
	}
	w.OnEvent(endpoints.ApplicationStart{Time: time.Now(), AppID: "app"})
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer never wrote")
	}
	const n = 1000
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		for i := range n {
			w.OnEvent(endpoints.TaskEnd{Time: time.Now(), JobID: 1, TaskID: int64(i), ExecutorID: "1",
				State: messages.TaskState_TASK_STATE_FINISHED})
		}
	}()
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("OnEvent waited for the stuck disk")
	}
	dropped := w.Dropped()
	if dropped == 0 || dropped >= n {
		t.Fatalf("Dropped = %d of %d; want the events beyond the queue's 4 KiB", dropped, n)
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var count int
	res, err := Replay(w.file.path, endpoints.ListenerFunc(func(endpoints.Event) { count++ }))
	if err != nil || res.Skipped != 0 || int64(count) != 1+n-dropped {
		t.Fatalf("Replay = %+v, %v: %d events; want 1 + %d - %d dropped", res, err, count, n, dropped)
	}
}

func TestCloseReturnsWhenTheDiskStaysStuck(t *testing.T) {
	stuck, release := make(chan struct{}), make(chan struct{})
	w := NewWriter(Config{Dir: t.TempDir(), BufferSize: 16})
	w.wrap = func(f io.Writer) io.Writer { return &stuckWriter{w: f, stuck: stuck, release: release} }
	if err := w.Start("app", ""); err != nil {
		t.Fatal(err)
	}
	w.OnEvent(endpoints.ApplicationStart{Time: time.Now(), AppID: "app"})
	<-stuck
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Close(ctx); err != context.Canceled {
		t.Fatalf("Close = %v; want the context's error", err)
	}
	close(release) // the goroutine ends once the write returns
	<-w.done
}
