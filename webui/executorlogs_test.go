package webui_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// fakePodLogs is an ExecutorLogReader over the logs of known executors,
// recording what it was asked; it ignores limit for executor "unbounded".
type fakePodLogs struct {
	mu    sync.Mutex
	asked []string
	logs  map[string][]byte
}

func (f *fakePodLogs) read(_ context.Context, id string, start int64, limit int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, fmt.Sprintf("%s %d %d", id, start, limit))
	switch id {
	case "unbounded": // a reader that ignores max
		return bytes.Repeat([]byte("u"), 3*webui.MaxExecutorLogBytes), nil
	case "denied":
		return nil, errors.New(`pods "app-exec-2" is forbidden: cannot get resource "pods/log"`)
	}
	log, ok := f.logs[id]
	if !ok {
		return nil, fmt.Errorf("no executor %q in this application: %w", id, fs.ErrNotExist)
	}
	if start < 0 {
		start = max(0, int64(len(log))+start)
	}
	log = log[min(start, int64(len(log))):]
	return log[:min(len(log), limit)], nil
}

// The driver's UI serves an executor's log through its reader, as plain
// text, behind the secret, bounded to 64 KiB, from the end by default.
func TestDriverExecutorLogs(t *testing.T) {
	c := startCluster(t, 1, 1)
	big := bytes.Repeat([]byte("0123456789"), 10_000) // 100,000 bytes
	logs := &fakePodLogs{logs: map[string][]byte{"1": big}}
	base := serve(t, webui.NewDriverUI(c.Driver, webui.AppInfo{ID: "app-1"}, webui.WithSecret("s3cret"),
		webui.WithExecutorLogs(logs.read))).URL
	auth := []string{"Authorization", "Bearer s3cret"}
	if resp, _ := do(t, base+webui.ExecutorLogPath("1")); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the secret: %d", resp.StatusCode)
	}
	resp, body := do(t, base+webui.ExecutorLogPath("1"), auth...)
	if resp.StatusCode != http.StatusOK || body != string(big[len(big)-4096:]) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("the default tail: %d %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	for _, tc := range []struct {
		query  string
		status int
		want   string
	}{
		{"?id=1&start=-10", http.StatusOK, "0123456789"},
		{"?id=1&start=-1000000", http.StatusOK, string(big[len(big)-webui.MaxExecutorLogBytes:])},
		{"?id=1&start=5", http.StatusOK, string(big[5 : 5+webui.MaxExecutorLogBytes])},
		{"?id=1&start=99995", http.StatusOK, "56789"},
		{"?id=unbounded&start=-100", http.StatusOK, strings.Repeat("u", 100)},
		{"?id=unbounded&start=0", http.StatusOK, strings.Repeat("u", webui.MaxExecutorLogBytes)},
		{"?id=7", http.StatusNotFound, `executor 7: no executor "7" in this application`},
		{"?id=denied", http.StatusBadGateway, `reading executor denied's log: pods "app-exec-2" is forbidden`},
		{"?id=1&start=end", http.StatusBadRequest, "start: not an integer"},
		{"?start=-10", http.StatusBadRequest, "id: the executor's id is required"},
	} {
		resp, body := do(t, base+"/executors/logs/"+tc.query, auth...)
		if resp.StatusCode != tc.status || !strings.HasPrefix(body, tc.want) || (tc.status == http.StatusOK && body != tc.want) {
			t.Errorf("%s: %d %.80q; want %d %.80q", tc.query, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	want := []string{"1 -4096 4096", "1 -10 10", "1 -65536 65536", "1 5 65536", "1 99995 65536",
		"unbounded -100 100", "unbounded 0 65536", "7 -4096 4096", "denied -4096 4096"}
	if strings.Join(logs.asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("reads:\n%s\nwant:\n%s", strings.Join(logs.asked, "\n"), strings.Join(want, "\n"))
	}
}

// Without a reader the route answers 404 and says why.
func TestDriverExecutorLogsNotServed(t *testing.T) {
	c := startCluster(t, 1, 1)
	base := serve(t, webui.NewDriverUI(c.Driver, webui.AppInfo{ID: "app-1"})).URL
	if resp, body := do(t, base+webui.ExecutorLogPath("1")); resp.StatusCode != http.StatusNotFound ||
		!strings.Contains(body, "serves no executor logs") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// The executors page shows an executor's pod under its id and links its
// logs; the REST API lists its attributes, as Spark's ExecutorSummary.
func TestExecutorsPageShowsPodAndLogLinks(t *testing.T) {
	store := webui.NewAppStore()
	now := time.Now()
	store.OnEvent(endpoints.ApplicationStart{Time: now, AppID: "app-1", AppName: "a"})
	store.OnEvent(endpoints.ExecutorAdded{Time: now, ExecutorID: "3", Host: "10.0.0.7", Cores: 1,
		LogURLs:    map[string]string{"log": "http://driver:4040/executors/logs/?id=3&start=-4096", "evil": "javascript:alert(1)"},
		Attributes: map[string]string{"KUBERNETES_POD_NAME": "app-exec-3", "KUBERNETES_NAMESPACE": "ns"}})
	store.OnEvent(endpoints.ExecutorAdded{Time: now, ExecutorID: "4", Host: "h", Cores: 1})
	base := serve(t, webui.NewApplicationUI(store)).URL
	code, page := get(t, base+"/executors/", "")
	if code != http.StatusOK || !strings.Contains(page, `<td>3<div class="muted pod">pod app-exec-3</div></td>`) ||
		!strings.Contains(page, `<a class="log" data-log="log" href="http://driver:4040/executors/logs/?id=3&amp;start=-4096">log</a>`) ||
		strings.Contains(page, "javascript:") || strings.Contains(page, "pod </div>") {
		t.Fatalf("executors page (%d):\n%s", code, page)
	}
	var execs []struct {
		ID         string            `json:"id"`
		Attributes map[string]string `json:"attributes"`
	}
	getJSON(t, base+"/api/v1/applications/app-1/allexecutors", &execs)
	if len(execs) != 2 || execs[0].Attributes["KUBERNETES_POD_NAME"] != "app-exec-3" || execs[1].Attributes == nil {
		t.Fatalf("allexecutors: %+v", execs)
	}
}
