package cluster_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
)

// memNetwork is a cluster.Network over an actor.MemNetwork: every env is in
// this process and no socket is opened.
type memNetwork struct {
	net  *actor.MemNetwork
	log  zerolog.Logger
	port atomic.Int32

	mu    sync.Mutex
	calls []string // "listen NAME" and "client NAME", in order
}

var _ cluster.Network = (*memNetwork)(nil)

func newMemNetwork(t *testing.T) *memNetwork {
	n := &memNetwork{net: actor.NewMemNetwork(), log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}
	n.port.Store(20000)
	return n
}

func (n *memNetwork) record(call string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, call)
}

func (n *memNetwork) Listen(name string, conf *actor.Conf, port int) (*actor.Env, error) {
	if port == 0 {
		port = int(n.port.Add(1))
	}
	n.record("listen " + name)
	return actor.NewEnv(name, conf, actor.WithTransport(n.net.Transport("127.0.0.1", port)), actor.WithLogger(n.log))
}

func (n *memNetwork) Client(name string, conf *actor.Conf) (*actor.Env, error) {
	n.record("client " + name)
	return actor.NewEnv(name, conf, actor.WithTransport(n.net.ClientTransport()), actor.WithLogger(n.log))
}

// Submit on local[N] runs its driver and executor on the Network it is
// given: here an in-memory one, so the whole job runs without a socket.
func TestSubmitLocalOnMemNetwork(t *testing.T) {
	master, err := cluster.ParseMaster("local[2]")
	if err != nil {
		t.Fatal(err)
	}
	n := newMemNetwork(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = managers.Submit(ctx, cluster.SubmitConfig{Master: master, Class: "example.SumOfSquares", Network: n,
		Stdout: &out, Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "sum of squares: 30\n" {
		t.Fatalf("output %q", got)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	// The driver listens; the executor's envs (its config fetcher's, then
	// its own) are clients.
	want := []string{"listen sparkDriver", "client driverPropsFetcher", "client sparkExecutor"}
	if !slices.Equal(n.calls, want) {
		t.Fatalf("envs created on the network: %v, want %v", n.calls, want)
	}
}
