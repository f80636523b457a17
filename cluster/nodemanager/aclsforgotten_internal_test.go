package nodemanager

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// The node manager keeps an application's ACLs in memory only while it
// runs or localizes one of its containers; its logs' readers then read the
// copy in the application's log folder. Before, every application that
// ever ran a container on the node left its ACLs in memory for as long as
// the node manager ran: lists of any length a message carries.
func TestACLsAreForgottenWithTheLastContainer(t *testing.T) {
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
	log := zerolog.Nop()
	nm, err := Start(testutil.Context(t, 10*time.Second), newEnv("nm", 2), Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}, Dir: filepath.Join(t.TempDir(), "node"),
		HeartbeatInterval: 20 * time.Millisecond, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Shutdown(context.Background()) })
	client := rmclient.New(newEnv("client", 0), rm.Address())

	viewers := make([]string, 20000) // about 200 KB of user names an application
	for i := range viewers {
		viewers[i] = fmt.Sprintf("viewer%05d", i)
	}
	const apps = 5
	for range apps {
		h, err := client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 128, Cores: 1},
			AMCommand: []string{"/bin/sh", "-c", "exit 0"}, ACLs: cluster.ACLs{Enabled: true, View: viewers}, ReportInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := h.Wait(testutil.Context(t, 10*time.Second)); !r.State.Terminal() {
			t.Fatalf("application %s is %s", h.AppID(), r.State)
		}
	}
	testutil.Eventually(t, 10*time.Second, "no container on the node", func() bool {
		nm.mu.Lock()
		defer nm.mu.Unlock()
		return len(nm.containers) == 0 && len(nm.localizing) == 0 && len(nm.completed) == 0
	})
	nm.mu.Lock()
	kept, size := len(nm.acls), 0
	for _, a := range nm.acls {
		size += proto.Size(a)
	}
	nm.mu.Unlock()
	if kept > 0 {
		t.Fatalf("all %d applications ended and the node runs none of their containers, yet the node manager keeps the ACLs of %d in memory (%d bytes)",
			apps, kept, size)
	}
}
