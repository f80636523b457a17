package history_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// An application's page asked for without its trailing slash
// (/history/app-1/jobs, as a user types it) is redirected to that page
// under /history/app-1/, its query kept. Before, the application's own
// router answered with a redirect to /jobs/ (its routes sit at the root
// under http.StripPrefix), which on a history server is a 404.
func TestAPageWithoutItsSlashIsRedirectedUnderItsApplication(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-1", true, endpoints.ApplicationStart{Time: now, AppID: "app-1", AppName: "one"},
		endpoints.JobStart{Time: now, JobID: 0, TaskName: "t", NumTasks: 1}, endpoints.ApplicationEnd{Time: now})
	_, hs := historyServer(t, dir)
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ path, want string }{
		{"/history/app-1/jobs", "/history/app-1/jobs/"},
		{"/history/app-1/jobs/job?id=0", "/history/app-1/jobs/job/?id=0"},
		{"/history/app-1/executors", "/history/app-1/executors/"},
		{"/history/app-1/environment", "/history/app-1/environment/"},
	} {
		resp, err := client.Get(hs.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || loc != tc.want {
			t.Errorf("GET %s = %d, Location %q; want a redirect to %q", tc.path, resp.StatusCode, loc, tc.want)
			continue
		}
		if code, body := get(t, hs.URL+loc); code != http.StatusOK {
			t.Errorf("GET %s (from %s) = %d: %.300s", loc, tc.path, code, body)
		}
	}
}
