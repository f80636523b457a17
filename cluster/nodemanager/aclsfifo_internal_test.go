package nodemanager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
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

// Once an application's last container on the node has ended, its ACLs
// are read from the copy in logs/APP/.acls, a folder its containers can
// write in (they run as the node manager's user). A container that put a
// FIFO there does not freeze the node manager's endpoint: the copy is read
// only if it is a regular file, and without waiting in a FIFO's open.
// Before, os.ReadFile blocked in open(2) on the endpoint, which then
// answered nothing else, container starts and stops included.
func TestAnACLsFIFODoesNotFreezeTheNodeManager(t *testing.T) {
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
	dir := filepath.Join(t.TempDir(), "node")
	nmEnv := newEnv("nm", 2)
	nm, err := Start(testutil.Context(t, 10*time.Second), nmEnv, Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 2}, Dir: dir,
		HeartbeatInterval: 20 * time.Millisecond, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Shutdown(context.Background()) })
	clientEnv := newEnv("client", 0)
	client := rmclient.New(clientEnv, rm.Address())

	// The application's only container swaps its ACLs' copy for a FIFO.
	h, err := client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 128, Cores: 1},
		AMCommand:      []string{"/bin/sh", "-c", `rm -f "$LOG_DIRS/../.acls" && mkfifo "$LOG_DIRS/../.acls"`},
		ACLs:           cluster.ACLs{Enabled: true, View: []string{"bob"}},
		ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := h.Wait(testutil.Context(t, 10*time.Second)); !r.State.Terminal() {
		t.Fatalf("application %s is %s", h.AppID(), r.State)
	}
	fifo := filepath.Join(dir, "logs", h.AppID(), aclsFile)
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the container did not put a FIFO at %s: %v", fifo, err)
	}
	testutil.Eventually(t, 10*time.Second, "the application's ACLs forgotten", func() bool {
		nm.mu.Lock()
		defer nm.mu.Unlock()
		_, kept := nm.acls[h.AppID()]
		return !kept && len(nm.containers) == 0
	})
	// Unblock a reader stuck on the FIFO, so that the envs can stop.
	t.Cleanup(func() {
		if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
	})

	ep := clientEnv.RemoteRef(nmEnv.Address(), cluster.NodeManagerEndpointName)
	timeout := actor.RpcTimeout{Duration: 5 * time.Second, Key: "test"}
	// A log request for the finished application, as any user's
	// rmclient.ApplicationLogs makes it.
	_ = ep.AskWithTimeout(context.Background(), &messages.NmGetApplicationLogs{AppId: h.AppID(), User: "bob"}, timeout)
	// Any later ask of the endpoint: here a log request for another
	// application, which it answers at once when it is not frozen.
	_, err = ep.AskWithTimeout(context.Background(), &messages.NmGetApplicationLogs{AppId: "application_1_0099", User: "bob"}, timeout).Result()
	if errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("the node manager's endpoint is frozen by the FIFO its application's container left at %s: %v", fifo, err)
	}
}
