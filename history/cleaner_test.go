package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// With spark.history.fs.cleaner.enabled, the history server deletes from
// its folder the logs last written more than maxAge ago, then, while more
// than maxNum are left, the finished ones written longest ago (a log still
// being written stays), as Spark's does; the list drops them. Before, the
// keys were accepted and ignored, and the folder grew for ever.
func TestCleanerDeletesOldLogs(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for _, id := range []string{"app-old", "app-a", "app-b"} {
		writeLog(t, dir, id, true, endpoints.ApplicationStart{Time: now, AppID: id, AppName: id}, endpoints.ApplicationEnd{Time: now})
	}
	// A driver's log as it is while it runs.
	running := fmt.Sprintf("{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"running\",\"App ID\":\"app-running\",\"Timestamp\":%d}\n",
		now.UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, "app-running.inprogress"), []byte(running), 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := eventlog.List(dir)
	if err != nil || len(infos) != 4 {
		t.Fatalf("logs %+v, %v", infos, err)
	}
	age := map[string]time.Duration{"app-old": 10 * 24 * time.Hour, "app-a": 3 * time.Hour, "app-b": time.Hour, "app-running": 5 * time.Hour}
	for _, in := range infos {
		at := now.Add(-age[in.AppID])
		if err := os.Chtimes(in.Path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	conf := actor.NewConf().Set(history.KeyLogDirectory, dir).Set(history.KeyCleanerEnabled, "true").
		Set(history.KeyCleanerMaxAge, "7d").Set(history.KeyCleanerMaxNum, "2")
	cfg, err := history.ConfigFromConf(conf)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Cleaner.Interval != 24*time.Hour || cfg.Cleaner.MaxAge != 7*24*time.Hour || cfg.Cleaner.MaxNum != 2 {
		t.Fatalf("cleaner %+v", cfg.Cleaner)
	}
	cfg.Logger = zerolog.Nop()
	p, err := history.NewProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	listed := func() []string {
		var ids []string
		for _, a := range p.Applications() {
			ids = append(ids, a.ID)
		}
		slices.Sort(ids)
		return ids
	}
	testutil.Eventually(t, 10*time.Second, "the cleaner's first run", func() bool {
		return slices.Equal(listed(), []string{"app-b", "app-running"})
	})
	left, err := eventlog.List(dir)
	if err != nil || len(left) != 2 {
		t.Fatalf("left %+v, %v; want app-b's and app-running's", left, err)
	}
	for _, v := range []string{"-1", "soon"} {
		if _, err := history.ConfigFromConf(actor.NewConf().Set(history.KeyCleanerEnabled, "true").Set(history.KeyCleanerMaxAge, v)); err == nil {
			t.Errorf("%s=%s: no error", history.KeyCleanerMaxAge, v)
		}
	}
}
