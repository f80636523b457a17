package history_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/webui"
)

// writeLog writes events as application appID's log in dir and closes it
// (close false: the log is left in progress, its writer returned).
func writeLog(t testing.TB, dir, appID string, close bool, events ...endpoints.Event) *eventlog.Writer {
	t.Helper()
	// A queue that holds a whole test log: a test writes faster than any
	// driver posts, and the writer would drop what it cannot hold.
	w := eventlog.NewWriter(eventlog.Config{Dir: dir, QueueBytes: 1 << 30})
	if err := w.Start(appID, ""); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		w.OnEvent(ev)
	}
	if close {
		closeLog(t, w)
		return nil
	}
	t.Cleanup(func() { closeLog(t, w) })
	return w
}

func closeLog(t testing.TB, w *eventlog.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := w.Dropped(); n > 0 {
		t.Fatalf("the writer dropped %d events", n)
	}
}

// historyServer serves the history of dir; the test's cleanup stops it.
func historyServer(t testing.TB, dir string) (*history.Provider, *httptest.Server) {
	t.Helper()
	p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 2, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(webui.NewHistoryServerUI(p))
	t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	return p, srv
}

// get fetches url and returns the status and body.
func get(t testing.TB, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// getJSON fetches url, checks for 200 and decodes the body into v.
func getJSON(t testing.TB, url string, v any) {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", url, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}
