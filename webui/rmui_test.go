package webui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
)

type rmAppJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	User        string  `json:"user"`
	State       string  `json:"state"`
	FinalStatus string  `json:"finalStatus"`
	TrackingURL string  `json:"trackingUrl"`
	StartedTime int64   `json:"startedTime"`
	Progress    float64 `json:"progress"`
	Containers  int     `json:"runningContainers"`
}

type rmNodeJSON struct {
	ID           string `json:"id"`
	State        string `json:"state"`
	Containers   int    `json:"numContainers"`
	MemUsedMB    int64  `json:"usedMemoryMB"`
	MemFreeMB    int64  `json:"availMemoryMB"`
	CoresUsed    int    `json:"usedVirtualCores"`
	CoresFree    int    `json:"availableVirtualCores"`
	LastHealthMs int64  `json:"lastHealthUpdate"`
}

// rmWithNode starts a resource manager and one node manager (1024 MB, 2
// cores) over loopback TCP, in this process; containers run sleep.
func rmWithNode(t *testing.T) (*resourcemanager.ResourceManager, *nodemanager.NodeManager, *rmclient.Client) {
	t.Helper()
	log := zerolog.Nop()
	listen := func(name string) *actor.Env {
		env, err := netty.NewEnv(name, actor.NewConf(), netty.WithBindHost("127.0.0.1"), netty.WithPort(0), netty.WithLogger(log))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = env.Shutdown(ctx)
		})
		return env
	}
	rmEnv := listen("sparkResourceManager")
	rm, err := resourcemanager.Start(rmEnv, resourcemanager.Config{StagingDir: t.TempDir(), Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rm.Shutdown(context.Background()) })
	nmEnv := listen("sparkNodeManager")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nm, err := nodemanager.Start(ctx, nmEnv, nodemanager.Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}, Dir: t.TempDir(), Executable: "sleep",
		HeartbeatInterval: 50 * time.Millisecond, KillGrace: 50 * time.Millisecond, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = nm.Shutdown(ctx)
	})
	cenv, err := netty.NewEnv("client", actor.NewConf(), netty.WithClientMode(), netty.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cenv.Shutdown(context.Background()) })
	return rm, nm, rmclient.New(cenv, rm.Address())
}

// The resource manager's pages and API show its applications (with the
// tracking URL the AM registered) and its nodes' resources.
func TestResourceManagerUI(t *testing.T) {
	rm, nm, client := rmWithNode(t)
	base := serve(t, webui.NewResourceManagerUI(rm.Ref())).URL
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// An application whose AM container (the command "sleep 60") runs, and
	// whose AM registers as an application master would.
	h, err := client.Submit(ctx, rmclient.Submission{Name: "ui app", User: "tester", AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: []string{"sparkrpc", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	id := h.AppID()
	testutil.Eventually(t, testTimeout, "the AM container running", func() bool { return len(nm.RunningContainers()) == 1 })
	amEnv, err := netty.NewEnv("am", actor.NewConf(), netty.WithClientMode(), netty.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	defer amEnv.Shutdown(context.Background())
	const tracking = "http://127.0.0.1:4040"
	if _, err := actor.AskAs[*messages.AmRegisterResponse](ctx, amEnv.RemoteRef(rm.Address(), cluster.ResourceManagerEndpointName),
		&messages.AmRegister{AppId: id, Host: "127.0.0.1", DriverUrl: "spark://CoarseGrainedScheduler@127.0.0.1:1", TrackingUrl: tracking}); err != nil {
		t.Fatal(err)
	}

	var apps []rmAppJSON
	getJSON(t, base+"/api/v1/applications", &apps)
	if len(apps) != 1 || apps[0].ID != id || apps[0].Name != "ui app" || apps[0].User != "tester" || apps[0].State != "RUNNING" ||
		apps[0].FinalStatus != "UNDEFINED" || apps[0].TrackingURL != tracking || apps[0].StartedTime == 0 {
		t.Fatalf("applications = %+v", apps)
	}
	var one rmAppJSON
	getJSON(t, base+"/api/v1/applications/"+id, &one)
	if one.ID != id || one.TrackingURL != tracking {
		t.Fatalf("application %s = %+v", id, one)
	}
	getJSON(t, base+"/api/v1/applications?state=FINISHED,KILLED", &apps)
	if len(apps) != 0 {
		t.Fatalf("?state=FINISHED,KILLED = %+v", apps)
	}
	code, page := get(t, base+"/cluster/apps", "")
	for _, want := range []string{`data-app="` + id + `"`, `<a class="tracking" href="` + tracking + `">ApplicationMaster</a>`, "ui app", "tester", "RUNNING", "UNDEFINED"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("/cluster/apps = %d, no %q:\n%s", code, want, page)
		}
	}

	var nodes []rmNodeJSON
	getJSON(t, base+"/api/v1/nodes", &nodes)
	if len(nodes) != 1 || nodes[0].ID != nm.NodeID() || nodes[0].State != "RUNNING" || nodes[0].Containers != 1 ||
		nodes[0].MemUsedMB != 256 || nodes[0].MemFreeMB != 768 || nodes[0].CoresUsed != 1 || nodes[0].CoresFree != 1 || nodes[0].LastHealthMs == 0 {
		t.Fatalf("nodes = %+v", nodes)
	}
	// The apps page counts the AM's container as the nodes page does.
	if one.Containers != nodes[0].Containers {
		t.Fatalf("the application runs %d containers, its node %d", one.Containers, nodes[0].Containers)
	}
	code, page = get(t, base+"/cluster/nodes", "")
	for _, want := range []string{`data-node="` + nm.NodeID() + `"`, "256 MB", "768 MB"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("/cluster/nodes = %d, no %q:\n%s", code, want, page)
		}
	}
	if strings.Contains(page, "<td>—</td>") {
		t.Fatalf("/cluster/nodes shows no last heartbeat:\n%s", page)
	}

	if _, err := client.Kill(ctx, id, "killed by the test"); err != nil {
		t.Fatal(err)
	}
	getJSON(t, base+"/api/v1/applications/"+id, &one)
	if one.State != "KILLED" || one.FinalStatus != "KILLED" || one.Containers != 0 {
		t.Fatalf("after kill: %+v", one)
	}
	testutil.Eventually(t, testTimeout, "the AM container stopped", func() bool { return len(nm.RunningContainers()) == 0 })
}

func TestResourceManagerUIErrors(t *testing.T) {
	rm, _, _ := rmWithNode(t)
	base := serve(t, webui.NewResourceManagerUI(rm.Ref())).URL
	wantJSONError(t, base+"/api/v1/applications/application_1_0001", http.StatusNotFound, "unknown application: application_1_0001")
	wantJSONError(t, base+"/api/v1/applications?state=SLEEPING", http.StatusBadRequest, "invalid application state: SLEEPING")
	wantJSONError(t, base+"/api/v1/cluster", http.StatusNotFound, "no such API route")
	wantJSONError(t, base+"/metrics", http.StatusNotFound, "no metrics")
	code, page := get(t, base+"/", "")
	if code != http.StatusOK || !strings.Contains(page, "No applications.") {
		t.Fatalf("/ = %d:\n%s", code, page)
	}
}

// A node manager's page and API list its running containers.
func TestNodeManagerUI(t *testing.T) {
	started := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	cs := []webui.Container{{ID: "container_1_0001_01_000001", AppID: "application_1_0001", PID: 4242, MemoryMB: 2048, Cores: 2,
		Started: started, LogDir: "/logs/c1"}}
	base := serve(t, webui.NewNodeManagerUI("node-1", func() []webui.Container { return cs })).URL
	code, page := get(t, base+"/", "")
	for _, want := range []string{`data-container="container_1_0001_01_000001"`, "application_1_0001", "4242", "2 GB", "node-1"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("/ = %d, no %q:\n%s", code, want, page)
		}
	}
	var got []webui.Container
	getJSON(t, base+"/api/v1/containers", &got)
	if len(got) != 1 || got[0].ID != cs[0].ID || got[0].PID != 4242 || got[0].MemoryMB != 2048 {
		t.Fatalf("containers = %+v", got)
	}
	wantJSONError(t, base+"/api/v1/nodes", http.StatusNotFound, "no such API route")
	wantJSONError(t, base+"/metrics", http.StatusNotFound, "no metrics")
	cs = nil
	getJSON(t, base+"/api/v1/containers", &got)
	if len(got) != 0 {
		t.Fatalf("no containers: %+v", got)
	}
}
