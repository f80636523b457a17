package history_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/history"
)

// A FIFO among a rolling log's events files (anyone who can write in the
// event log folder can make one, as any driver can write its log there)
// does not freeze the history server: a rolling log's files are taken
// only when they are regular files, as the folder's own entries are.
// Before, listing opened it, and the open blocked until a writer came:
// NewProvider (the server's start) and every later Refresh never returned.
func TestFIFOInARollingLogDoesNotFreezeTheServer(t *testing.T) {
	dir := t.TempDir()
	rolling := filepath.Join(dir, "eventlog_v2_app-fifo")
	if err := os.Mkdir(rolling, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rolling, "appstatus_app-fifo"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(rolling, "events_1_app-fifo")
	if err := syscall.Mkfifo(fifo, 0o640); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 2, Logger: zerolog.Nop()})
		if err == nil {
			p.Close()
		}
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// Release the reader blocked in open(2), and take the FIFO away
		// so that the next reading fails instead, for the test to end.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			os.Remove(fifo)
			f.Close()
		}
		<-done
		t.Fatal("history.NewProvider did not return in 10s: it is blocked opening a FIFO in a rolling log's folder")
	}
}

// A rolling log's events file that is a symbolic link is not followed out
// of the event log folder, as the folder's own links are not. Before, the
// history server listed, and served the pages of, a log that was not in
// its folder.
func TestSymlinkInARollingLogIsNotFollowedOutOfTheFolder(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	now := time.Now()
	writeLog(t, elsewhere, "app-outside", true, endpoints.ApplicationStart{Time: now, AppID: "app-outside", AppName: "not in the folder"},
		endpoints.ApplicationEnd{Time: now})
	rolling := filepath.Join(dir, "eventlog_v2_app-link")
	if err := os.Mkdir(rolling, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rolling, "appstatus_app-link"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "app-outside"), filepath.Join(rolling, "events_1_app-link")); err != nil {
		t.Fatal(err)
	}
	// The same link directly in the folder is skipped.
	if err := os.Symlink(filepath.Join(elsewhere, "app-outside"), filepath.Join(dir, "app-direct")); err != nil {
		t.Fatal(err)
	}
	p, hs := historyServer(t, dir)
	for _, a := range p.Applications() {
		if a.ID == "app-outside" {
			code, _ := get(t, hs.URL+"/history/app-outside/jobs/")
			t.Fatalf("the history server lists %q (%q) from %s, outside its folder %s, through a symbolic link in a rolling log; its pages answer %d",
				a.ID, a.Name, elsewhere, dir, code)
		}
	}
}
