package eventlog_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
)

// A log whose file is not a regular file is refused with ErrNotRegular: a
// device (whose reading may never end, as /dev/zero's) and a FIFO, whose
// open does not wait for a writer. Before, a FIFO's open blocked its
// reader for ever and a device was read as a log.
func TestALogThatIsNotARegularFileIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "app-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{os.DevNull, fifo} {
		done := make(chan error, 1)
		go func() {
			_, err := eventlog.Replay(p, endpoints.ListenerFunc(func(endpoints.Event) {}))
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, eventlog.ErrNotRegular) {
				t.Errorf("Replay(%s): %v, want ErrNotRegular", p, err)
			}
		case <-time.After(10 * time.Second):
			// Let the blocked open return, for the test to end.
			if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
			<-done
			t.Fatalf("Replay(%s) blocked in its open", p)
		}
	}
}
