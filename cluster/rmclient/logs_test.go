package rmclient_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The resource manager lists its applications by state, and the node
// managers hand out the container logs of an application, in bounded
// chunks, and nothing outside an application's log folders.
func TestApplicationsAndContainerLogs(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 1})
	ctx := testutil.Context(t, 30*time.Second)
	// 600,000 bytes on stdout: more than two chunks.
	h := mc.SubmitShell(`head -c 600000 /dev/zero | tr '\0' a; echo; echo to stderr >&2`, cluster.Resource{MemoryMB: 512, Cores: 1})
	if _, err := h.Wait(ctx); err == nil {
		t.Fatal("an AM that exits without unregistering succeeded")
	}
	id := h.AppID()
	all, err := mc.Client.Applications(ctx)
	if err != nil || len(all) != 1 || all[0].ID != id || all[0].State != cluster.StateFailed || all[0].Name != "shell" || all[0].User == "" {
		t.Fatalf("applications: %v, %+v", err, all)
	}
	running, err := mc.Client.Applications(ctx, cluster.ActiveAppStates()...)
	if err != nil || len(running) != 0 {
		t.Fatalf("running applications: %v, %+v", err, running)
	}
	failed, err := mc.Client.Applications(ctx, cluster.StateFinished, cluster.StateFailed)
	if err != nil || len(failed) != 1 {
		t.Fatalf("ended applications: %v, %+v", err, failed)
	}

	listing, err := mc.Client.ApplicationLogs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Unavailable) != 0 || len(listing.Logs) != 2 {
		t.Fatalf("listing: %+v", listing)
	}
	want := map[string]string{"stdout": strings.Repeat("a", 600000) + "\n", "stderr": "to stderr\n"}
	for i, name := range []string{"stdout", "stderr"} {
		l := listing.Logs[i]
		if l.Name != name || !strings.HasSuffix(l.ContainerID, "_000001") || l.NodeID != mc.NMs[0].NodeID() || l.Size != int64(len(want[name])) {
			t.Fatalf("log %d: %+v", i, l)
		}
		var buf bytes.Buffer
		n, err := mc.Client.CopyLog(ctx, id, l, &buf)
		if err != nil || n != l.Size || buf.String() != want[name] {
			t.Fatalf("%s: %d bytes, %v; got %.40q...", name, n, err, buf.String())
		}
	}

	if _, err := mc.Client.ApplicationLogs(ctx, "application_1_0042"); err == nil || !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("logs of an unknown application: %v", err)
	}

	// The node manager reads nothing outside the application's log folders.
	cenv, err := actor.NewEnv("prober", nil, actor.WithTransport(mc.Net.ClientTransport()))
	if err != nil {
		t.Fatal(err)
	}
	defer cenv.Shutdown(ctx)
	nodeAddr, err := actor.ParseHostPort(mc.NMs[0].NodeID())
	if err != nil {
		t.Fatal(err)
	}
	nm := cenv.RemoteRef(nodeAddr, cluster.NodeManagerEndpointName)
	ct := listing.Logs[0].ContainerID
	for _, req := range []*messages.NmReadContainerLog{
		{AppId: id, ContainerId: "..", Name: ct},
		{AppId: id, ContainerId: ct, Name: "../../../apps"},
		{AppId: id, ContainerId: ct, Name: "nosuchfile"},
		{AppId: "../" + id, ContainerId: ct, Name: "stdout"},
		{AppId: id, ContainerId: ct, Name: "stdout", Offset: -1},
	} {
		if r, err := actor.AskAs[*messages.NmContainerLogChunk](ctx, nm, req); err == nil {
			t.Errorf("%v: read %d bytes", req, len(r.GetData()))
		}
	}
	// A chunk is bounded whatever the request asks for.
	r, err := actor.AskAs[*messages.NmContainerLogChunk](ctx, nm, &messages.NmReadContainerLog{AppId: id, ContainerId: ct, Name: "stdout", Length: 1 << 30})
	if err != nil || len(r.GetData()) == 0 || len(r.GetData()) > 1<<20 {
		t.Fatalf("big chunk: %d bytes, %v", len(r.GetData()), err)
	}
}

func TestParseAppState(t *testing.T) {
	for _, s := range []string{"RUNNING", "running", " Finished "} {
		if _, err := cluster.ParseAppState(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if st, _ := cluster.ParseAppState("killed"); st != cluster.StateKilled {
		t.Errorf("killed = %v", st)
	}
	if _, err := cluster.ParseAppState("DONE"); !errors.Is(err, cluster.ErrInvalidState) || !strings.Contains(err.Error(), "RUNNING") {
		t.Errorf("DONE: %v", err)
	}
}
