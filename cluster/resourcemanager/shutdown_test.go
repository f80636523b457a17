package resourcemanager_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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
)

// memEnvs returns a function that starts an env on net (listening on port,
// or a client when port is 0), shut down with the test.
func memEnvs(t *testing.T, net *actor.MemNetwork) func(name string, port int) *actor.Env {
	return func(name string, port int) *actor.Env {
		t.Helper()
		tr := net.ClientTransport()
		if port != 0 {
			tr = net.Transport("127.0.0.1", port)
		}
		env, err := actor.NewEnv(name, nil, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
		return env
	}
}

// Shutdown removes the staging folder the resource manager made only once
// its endpoint has handled what was queued for it. Before, it removed the
// folder at once, and the staging chunks still queued made it again: the
// folder outlived the resource manager.
func TestShutdownRemovesTheStagingFolderAfterWhatWasQueued(t *testing.T) {
	newEnv := memEnvs(t, actor.NewMemNetwork())
	rm, err := resourcemanager.Start(newEnv("rm", 1), resourcemanager.Config{}) // a staging folder of its own
	if err != nil {
		t.Fatal(err)
	}
	staging := rm.StagingDir()
	t.Cleanup(func() { _ = os.RemoveAll(staging) })
	cenv := newEnv("client", 0)
	appID, _, err := rmclient.New(cenv, rm.Address()).NewApplication(testutil.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ref := cenv.RemoteRef(rm.Address(), cluster.ResourceManagerEndpointName)
	data := make([]byte, 64<<10)
	var fs []*actor.Future
	for i := range 200 {
		fs = append(fs, ref.Ask(context.Background(), &messages.RmStageChunk{AppId: appID, User: cluster.CurrentUser(),
			Name: fmt.Sprintf("f%d.txt", i), Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE, Data: data}))
	}
	if _, err := fs[0].Result(); err != nil {
		t.Fatal(err)
	}
	if err := rm.Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		_, _ = f.Result() // each handled (or refused) by now
	}
	if _, err := os.Stat(staging); !errors.Is(err, os.ErrNotExist) {
		ents, _ := os.ReadDir(staging)
		t.Fatalf("the staging folder %s is there after Shutdown, with %d entries (%v)", staging, len(ents), err)
	}
}

// blockingLauncher starts no container: each launch waits until release
// is closed, and then fails.
type blockingLauncher struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (l *blockingLauncher) Launch(nodemanager.ContainerLaunch) (nodemanager.ContainerProcess, error) {
	l.once.Do(func() { close(l.started) })
	<-l.release
	return nil, errors.New("no container in this test")
}

// goroutinesIn returns the stacks of the goroutines running fn.
func goroutinesIn(fn string) []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			out = append(out, g)
		}
	}
	return out
}

// Shutdown leaves no goroutine waiting on a node manager's answer. Before,
// the goroutine that waited for a container's start outlived it for as
// long as the node manager did not answer (up to spark.rpc.askTimeout).
func TestShutdownLeavesNoGoroutineWaitingOnANodeManager(t *testing.T) {
	newEnv := memEnvs(t, actor.NewMemNetwork())
	rm, err := resourcemanager.Start(newEnv("rm", 1), resourcemanager.Config{StagingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l := &blockingLauncher{started: make(chan struct{}), release: make(chan struct{})}
	nm, err := nodemanager.Start(testutil.Context(t, 10*time.Second), newEnv("nm", 2), nodemanager.Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}, Dir: filepath.Join(t.TempDir(), "node"),
		HeartbeatInterval: 50 * time.Millisecond, Launcher: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nm.Shutdown(context.Background()) })
	t.Cleanup(func() { close(l.release) }) // before the node manager's shutdown
	client := rmclient.New(newEnv("client", 0), rm.Address())
	if _, err := client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: []string{"/bin/true"}}); err != nil {
		t.Fatal(err)
	}
	testutil.Recv(t, l.started, 10*time.Second, "the launch of the AM's container")
	if err := rm.Shutdown(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if gs := goroutinesIn("resourcemanager.(*rmEndpoint).run"); len(gs) != 0 {
		t.Fatalf("%d goroutine(s) of the resource manager outlive its Shutdown:\n%s", len(gs), strings.Join(gs, "\n\n"))
	}
}
