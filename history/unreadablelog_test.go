package history_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A rolling log's folder the history server cannot read (another user's,
// made with umask 077) is one log that cannot be read: the folder's other
// applications are listed, and later readings of the folder go on. Before,
// the server did not start, and once started no reading of the folder
// succeeded again. Root reads any folder, so as root the test runs itself
// again as nobody.
func TestUnreadableRollingFolderDoesNotHideTheOthers(t *testing.T) {
	if !testutil.AsNobody(t) {
		return
	}
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-good", true, endpoints.ApplicationStart{Time: now, AppID: "app-good", AppName: "good"},
		endpoints.ApplicationEnd{Time: now.Add(time.Second)})
	bad := filepath.Join(dir, "eventlog_v2_app-bad")
	if err := os.Mkdir(bad, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(bad, 0o700) })
	p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 2, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatalf("NewProvider with one unreadable log: %v", err)
	}
	defer p.Close()
	if apps := p.Applications(); len(apps) != 1 || apps[0].ID != "app-good" {
		t.Fatalf("Applications = %+v, want app-good", apps)
	}
	if err := p.Refresh(); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
}
