package history_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// /api/v1/applications filters as Spark's does: by start (minDate,
// maxDate), by end (minEndDate, maxEndDate), by status (repeatable), up to
// limit, and refuses a date it cannot parse. Before, every parameter but
// the first status was ignored: a script asking for the applications
// that ended since yesterday got every application the server ever listed.
func TestApplicationsAreFilteredAsSparks(t *testing.T) {
	dir := t.TempDir()
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	writeLog(t, dir, "app-2020", true, endpoints.ApplicationStart{Time: old, AppID: "app-2020", AppName: "old"},
		endpoints.ApplicationEnd{Time: old.Add(time.Hour)})
	recent := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	writeLog(t, dir, "app-2024", true, endpoints.ApplicationStart{Time: recent, AppID: "app-2024", AppName: "recent"},
		endpoints.ApplicationEnd{Time: recent.Add(time.Hour)})
	// A driver's log as it is while it runs.
	running := fmt.Sprintf("{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"running\",\"App ID\":\"app-running\",\"Timestamp\":%d}\n",
		recent.Add(time.Minute).UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, "app-running.inprogress"), []byte(running), 0o600); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	ids := func(query string) []string {
		t.Helper()
		var apps []webui.ApplicationInfo
		getJSON(t, hs.URL+"/api/v1/applications?"+query, &apps)
		var out []string
		for _, a := range apps {
			out = append(out, a.ID)
		}
		slices.Sort(out)
		return out
	}
	for query, want := range map[string][]string{
		"":                   {"app-2020", "app-2024", "app-running"},
		"minDate=2023-01-01": {"app-2024", "app-running"},
		"maxDate=2021-01-01": {"app-2020"},
		"minDate=" + url.QueryEscape("2024-06-01T12:00:30.000GMT"): {"app-running"},
		"maxDate=" + url.QueryEscape("2024-06-01T12:00:30.000GMT"): {"app-2020", "app-2024"},
		"minEndDate=2023-01-01":                       {"app-2024", "app-running"},
		"maxEndDate=2023-01-01":                       {"app-2020"},
		"minDate=1577836800000&maxDate=1577923200000": {"app-2020"},
		"status=running&status=completed":             {"app-2020", "app-2024", "app-running"},
		"status=RUNNING":                              {"app-running"},
		"status=completed&minDate=2023-01-01":         {"app-2024"},
	} {
		if got := ids(query); !slices.Equal(got, want) {
			t.Errorf("?%s = %v, want %v", query, got, want)
		}
	}
	if got := ids("limit=1"); len(got) != 1 {
		t.Errorf("?limit=1 = %v, want one application", got)
	}
	for _, bad := range []string{"minDate=yesterday", "maxEndDate=2024-13-45", "limit=ten", "status=sleeping"} {
		if code, body := get(t, hs.URL+"/api/v1/applications?"+bad); code != 400 {
			t.Errorf("?%s = %d %s, want 400", bad, code, body)
		}
	}
}
