package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logText is a small uncompressed event log of application id named name.
func logText(id, name string, at time.Time) string {
	return fmt.Sprintf("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"x\"}\n"+
		"{\"Event\":\"SparkListenerApplicationStart\",\"App ID\":%q,\"App Name\":%q,\"Timestamp\":%d}\n"+
		"{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":%d}\n", id, name, at.UnixMilli(), at.UnixMilli()+1)
}

// noPageShows fails t if a page of the history server at url shows text.
func noPageShows(t *testing.T, url, text string) {
	t.Helper()
	for _, u := range []string{"/api/v1/applications", "/api/v1/applications/app-evil", "/history/app-evil/"} {
		if _, body := get(t, url+u); strings.Contains(body, text) {
			t.Errorf("GET %s shows what the file outside the log folder holds (%d bytes)", u, len(body))
		}
	}
}

// A tenant, who writes into the log folder, puts "app-evil.inprogress" (a
// regular file, listed) beside a symbolic link "app-evil" to a file outside
// the folder: the server reads neither the link nor what it points at.
// Before, the reader looked for the finished name first, followed the link,
// and showed the file outside.
func TestSymlinkBesideAnInProgressLogIsNotFollowed(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	now := time.Now()
	target := filepath.Join(outside, "private-log")
	if err := os.WriteFile(target, []byte(logText("app-evil", "OUTSIDE-THE-FOLDER", now)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app-evil.inprogress"), []byte(logText("app-evil", "inside", now)), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "app-evil")); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	noPageShows(t, hs.URL, "OUTSIDE-THE-FOLDER")
}

// The same with a rolling log: "eventlog_v2_app-evil.inprogress" (a folder,
// listed) beside a symbolic link "eventlog_v2_app-evil" to a folder
// outside. Before, the reader followed the link into the folder outside.
func TestSymlinkedRollingFolderIsNotFollowed(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	now := time.Now()
	if err := os.WriteFile(filepath.Join(outside, "events_1_app-evil"), []byte(logText("app-evil", "OUTSIDE-THE-FOLDER", now)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "eventlog_v2_app-evil.inprogress"), 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "eventlog_v2_app-evil")); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	noPageShows(t, hs.URL, "OUTSIDE-THE-FOLDER")
}
