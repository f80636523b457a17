package webui_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/webui"
)

// The node manager's UI serves container logs through its reader, as plain
// text, behind the same secret as its other routes, with the requester
// taken from the credentials.
func TestNodeManagerContainerLogs(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	read := func(id, owner, file, requester string, start int64) (webui.ContainerLog, error) {
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s %s %s %s %d", id, owner, file, requester, start))
		mu.Unlock()
		switch {
		case requester == "mallory":
			return webui.ContainerLog{}, fmt.Errorf("no: %w", fs.ErrPermission)
		case file != "stdout":
			return webui.ContainerLog{}, fmt.Errorf("no such log: %w", fs.ErrNotExist)
		}
		return webui.ContainerLog{Data: []byte("<b>hello</b>\n"), Start: 4, Size: 17}, nil
	}
	base := newNodeUI(t, webui.WithSecret("s3cret"), webui.WithContainerLogs(read))
	const path = "/node/containerlogs/container_1_0001_01_000002/alice/"
	if resp, _ := do(t, base+path+"stdout"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the secret: %d", resp.StatusCode)
	}
	resp, body := do(t, base+path+"stdout?start=-13", "Authorization", basic("bob", "s3cret"))
	if resp.StatusCode != http.StatusOK || body != "<b>hello</b>\n" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Log-Start") != "4" || resp.Header.Get("X-Log-Size") != "17" {
		t.Fatalf("stdout: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := do(t, base+path+"stdout", "Authorization", "Bearer s3cret"); resp.StatusCode != http.StatusOK {
		t.Fatalf("with a bearer token: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		url, user string
		status    int
	}{
		{path + "stderr", "bob", http.StatusNotFound},
		{path + "stdout", "mallory", http.StatusForbidden},
		{path + "stdout?start=tail", "bob", http.StatusBadRequest},
		{"/node/containerlogs/container_1_0001_01_000002/alice", "bob", http.StatusNotFound},
	} {
		if resp, body := do(t, base+tc.url, "Authorization", basic(tc.user, "s3cret")); resp.StatusCode != tc.status {
			t.Fatalf("%s as %s: %d, want %d: %s", tc.url, tc.user, resp.StatusCode, tc.status, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"container_1_0001_01_000002 alice stdout bob -13",
		"container_1_0001_01_000002 alice stdout alice -4096", // a bearer token: the URL's user; no start: the last 4 KiB
		"container_1_0001_01_000002 alice stderr bob -4096",
		"container_1_0001_01_000002 alice stdout mallory -4096",
	}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Fatalf("reads:\n%s\nwant:\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
}

// Without a reader the route answers 404.
func TestNodeManagerContainerLogsNotServed(t *testing.T) {
	base := newNodeUI(t)
	if resp, _ := do(t, base+"/node/containerlogs/container_1_0001_01_000002/alice/stdout"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("%d", resp.StatusCode)
	}
}

// The containers page links each container's stdout and stderr.
func TestNodeManagerContainersLinkLogs(t *testing.T) {
	cs := []webui.Container{{ID: "container_1_0001_01_000002", AppID: "application_1_0001", User: "alice", PID: 1}}
	base := serve(t, webui.NewNodeManagerUI("node-1", func() []webui.Container { return cs })).URL
	_, page := get(t, base+"/", "")
	for _, want := range []string{`href="/node/containerlogs/container_1_0001_01_000002/alice/stdout?start=-4096"`,
		`href="/node/containerlogs/container_1_0001_01_000002/alice/stderr?start=-4096"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("no %s:\n%s", want, page)
		}
	}
}
