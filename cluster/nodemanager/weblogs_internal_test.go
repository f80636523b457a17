package nodemanager

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A node with two applications' container logs: alice's (ACLs on, bob may
// view) and carol's.
func webLogsNode(t *testing.T) *NodeManager {
	t.Helper()
	dir := t.TempDir()
	write := func(app, ct, name, content string) {
		d := filepath.Join(dir, "logs", app, ct)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("application_1_0001", "container_1_0001_01_000002", "stdout", strings.Repeat("x", 3*MaxWebLogBytes)+"the end\n")
	write("application_1_0001", "container_1_0001_01_000002", "stderr", "oops\n")
	write("application_1_0002", "container_1_0002_01_000001", "stdout", "carol's\n")
	// A link out of the container's folder, to another application's log.
	if err := os.Symlink(filepath.Join(dir, "logs", "application_1_0002", "container_1_0002_01_000001", "stdout"),
		filepath.Join(dir, "logs", "application_1_0001", "container_1_0001_01_000002", "link")); err != nil {
		t.Fatal(err)
	}
	return &NodeManager{cfg: Config{Dir: dir, AdminACLs: []string{"root"}}, nodeID: "node-1", acls: map[string]*messages.RmAppAcls{
		"application_1_0001": {Enabled: true, Owner: "alice", View: []string{"bob"}},
		"application_1_0002": {Enabled: true, Owner: "carol"},
	}}
}

func TestReadContainerLog(t *testing.T) {
	nm := webLogsNode(t)
	const ct = "container_1_0001_01_000002"
	for _, tc := range []struct {
		name                       string
		id, owner, file, requester string
		start                      int64
		want                       string // the data's suffix
		wantLen                    int
		wantStart                  int64
		notFound, denied           bool
	}{
		{name: "tail", id: ct, owner: "alice", file: "stdout", requester: "alice", start: -8, want: "the end\n", wantLen: 8,
			wantStart: 3 * MaxWebLogBytes},
		{name: "from the start, bounded", id: ct, owner: "alice", file: "stdout", requester: "alice", start: 0, want: "x",
			wantLen: MaxWebLogBytes},
		{name: "tail larger than the bound", id: ct, owner: "alice", file: "stdout", requester: "alice", start: -1 << 30,
			want: "x", wantLen: MaxWebLogBytes},
		{name: "past the end", id: ct, owner: "alice", file: "stdout", requester: "alice", start: 1 << 30, wantLen: 0,
			wantStart: 3*MaxWebLogBytes + 8},
		{name: "viewer", id: ct, owner: "alice", file: "stderr", requester: "bob", start: -4096, want: "oops\n", wantLen: 5},
		{name: "admin", id: ct, owner: "alice", file: "stderr", requester: "root", start: 0, want: "oops\n", wantLen: 5},
		{name: "another user", id: ct, owner: "alice", file: "stderr", requester: "carol", denied: true},
		{name: "wrong owner in the URL", id: ct, owner: "carol", file: "stderr", requester: "carol", notFound: true},
		{name: "parent folder", id: ct, owner: "alice", file: "..", requester: "alice", notFound: true},
		{name: "traversal", id: ct, owner: "alice", file: "../../application_1_0002/container_1_0002_01_000001/stdout",
			requester: "alice", notFound: true},
		{name: "link out of the folder", id: ct, owner: "alice", file: "link", requester: "alice", notFound: true},
		{name: "hidden file", id: ct, owner: "alice", file: ".acls", requester: "alice", notFound: true},
		{name: "not a container id", id: "../container_1_0002_01_000001", owner: "alice", file: "stdout", requester: "alice",
			notFound: true},
		{name: "other application, its owner", id: "container_1_0002_01_000001", owner: "carol", file: "stdout", requester: "carol",
			want: "carol's\n", wantLen: 8},
		{name: "other application, not its viewer", id: "container_1_0002_01_000001", owner: "carol", file: "stdout",
			requester: "alice", denied: true},
		{name: "no such container", id: "container_1_0001_01_000009", owner: "alice", file: "stdout", requester: "alice",
			notFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			part, err := nm.ReadContainerLog(tc.id, tc.owner, tc.file, tc.requester, tc.start)
			switch {
			case tc.notFound:
				if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, cluster.ErrNoSuchLog) {
					t.Fatalf("err = %v, want not found", err)
				}
				return
			case tc.denied:
				if !errors.Is(err, fs.ErrPermission) || !errors.Is(err, cluster.ErrPermissionDenied) {
					t.Fatalf("err = %v, want permission denied", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if len(part.Data) != tc.wantLen || !strings.HasSuffix(string(part.Data), tc.want) {
				t.Fatalf("read %d bytes ending %q, want %d ending %q", len(part.Data), tail(part.Data), tc.wantLen, tc.want)
			}
			if tc.wantStart != 0 && part.Start != tc.wantStart {
				t.Fatalf("start %d, want %d", part.Start, tc.wantStart)
			}
		})
	}
}

func tail(b []byte) string { return string(b[max(0, len(b)-16):]) }

// Containers get http log URLs when the node serves a web UI, none
// otherwise.
func TestContainerLogURLs(t *testing.T) {
	spec := containerSpec{id: "container_1_0001_01_000002", appID: "application_1_0001", user: "alice", webUI: "http://node-1:8042"}
	got := containerLogURLs(spec)
	if want := "http://node-1:8042/node/containerlogs/container_1_0001_01_000002/alice/stdout?start=-4096"; got["SPARK_LOG_URL_STDOUT"] != want {
		t.Fatalf("SPARK_LOG_URL_STDOUT = %q, want %q", got["SPARK_LOG_URL_STDOUT"], want)
	}
	if !strings.HasSuffix(got["SPARK_LOG_URL_STDERR"], "/alice/stderr?start=-4096") {
		t.Fatalf("SPARK_LOG_URL_STDERR = %q", got["SPARK_LOG_URL_STDERR"])
	}
	spec.webUI = ""
	if got := containerLogURLs(spec); len(got) != 0 {
		t.Fatalf("without a web UI: %v", got)
	}
	env := strings.Join(containerEnv(spec, t.TempDir(), t.TempDir()), "\n")
	if strings.Contains(env, "SPARK_LOG_URL") {
		t.Fatalf("without a web UI the container has log URLs:\n%s", env)
	}
}
