package nodemanager

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// localizingRig is a resource manager and one node manager on an
// in-memory network, whose fetches of staged resources block until their
// ctx ends, and a client.
type localizingRig struct {
	nm      *NodeManager
	client  *rmclient.Client
	logs    *testutil.SyncBuffer
	fetches chan struct{} // a value per fetch that started
}

func newLocalizingRig(t *testing.T) *localizingRig {
	t.Helper()
	net := actor.NewMemNetwork()
	newEnv := func(name string, port int) *actor.Env {
		tr := net.ClientTransport()
		if port != 0 {
			tr = net.Transport("127.0.0.1", port)
		}
		env, err := actor.NewEnv(name, nil, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		return env
	}
	rm, err := resourcemanager.Start(newEnv("rm", 1), resourcemanager.Config{StagingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	r := &localizingRig{logs: &testutil.SyncBuffer{}, fetches: make(chan struct{}, 16)}
	log := zerolog.New(r.logs)
	r.nm, err = Start(testutil.Context(t, 10*time.Second), newEnv("nm", 2), Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}, Dir: filepath.Join(t.TempDir(), "node"),
		HeartbeatInterval: 50 * time.Millisecond, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.nm.Shutdown(context.Background()) })
	r.nm.loc.mu.Lock()
	r.nm.loc.fetch = func(ctx context.Context, _ string, _ *messages.RmLocalResource, _ io.Writer) error {
		r.fetches <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	r.nm.loc.mu.Unlock()
	r.client = rmclient.New(newEnv("client", 0), rm.Address())
	return r
}

// submit submits an application whose AM would print "started", with a
// file to localize, and waits until its fetch has started.
func (r *localizingRig) submit(t *testing.T) *rmclient.AppHandle {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(data, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := r.client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: []string{"/bin/sh", "-c", "echo started"}, Files: []string{data}, ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Recv(t, r.fetches, 10*time.Second, "the fetch to start")
	return h
}

// workFolders returns the working folders of h's application on the node.
func (r *localizingRig) workFolders(h *rmclient.AppHandle) []string {
	dirs, _ := filepath.Glob(filepath.Join(r.nm.Dir(), "apps", h.AppID(), "container_*"))
	return dirs
}

// A container killed while it localizes never starts; it reports the
// kill, and its working folder goes.
func TestKillWhileLocalizing(t *testing.T) {
	r := newLocalizingRig(t)
	h := r.submit(t)
	if len(r.workFolders(h)) != 1 {
		t.Fatalf("working folders %v", r.workFolders(h))
	}
	if err := h.Kill(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the container to report its kill", func() bool {
		return strings.Contains(r.logs.String(), `"exitStatus":-106,"message":"container stopped while it localized"`)
	})
	if dirs := r.workFolders(h); len(dirs) != 0 {
		t.Fatalf("working folders left: %v", dirs)
	}
	if ids := r.nm.Containers(); len(ids) != 0 {
		t.Fatalf("running containers %v", ids)
	}
	logs, _ := filepath.Glob(filepath.Join(r.nm.Dir(), "logs", h.AppID(), "container_*", "stdout"))
	if len(logs) != 0 {
		t.Fatalf("a killed container started: %v", logs)
	}
}

// A node manager that shuts down while a container localizes ends at once
// and reports the container, whose application then fails with the
// reason.
func TestShutdownWhileLocalizing(t *testing.T) {
	r := newLocalizingRig(t)
	h := r.submit(t)
	start := time.Now()
	if err := r.nm.Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %s", d)
	}
	rep, err := h.Wait(testutil.Context(t, 10*time.Second))
	if !errors.Is(err, cluster.ErrAppFailed) || !strings.Contains(rep.Diagnostics, "exitCode: -106") ||
		!strings.Contains(rep.Diagnostics, "node manager shutting down") {
		t.Fatalf("report %+v, %v", rep, err)
	}
}
