package netty_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// countingNetwork is TCP that records the addresses it listens and dials
// on, as a dialer through a proxy would see them.
type countingNetwork struct {
	mu      sync.Mutex
	listens []string
	dials   []string
	refuse  bool
}

func (n *countingNetwork) Listen(network, address string) (net.Listener, error) {
	n.mu.Lock()
	n.listens = append(n.listens, address)
	n.mu.Unlock()
	return net.Listen(network, address)
}

var errNoRoute = errors.New("no route through the proxy")

func (n *countingNetwork) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	n.mu.Lock()
	n.dials = append(n.dials, address)
	refuse := n.refuse
	n.mu.Unlock()
	if refuse {
		return nil, errNoRoute
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// A transport listens and dials through the Network it is given, and a
// dial that the Network fails fails the asks queued for it with that error.
func TestWithNetworkListensAndDialsThroughIt(t *testing.T) {
	sn, cn := &countingNetwork{}, &countingNetwork{}
	server := newEnv(t, "server", nil, netty.WithNetwork(sn))
	register(t, server, "echo", newEcho())
	client := newClientEnv(t, "client", nil, netty.WithNetwork(cn))
	ref := lookup(t, client, server.Address(), "echo")
	if got := askString(t, ref, "through"); got != "through" {
		t.Fatalf("echo: got %q", got)
	}
	sn.mu.Lock()
	listens := sn.listens
	sn.mu.Unlock()
	if len(listens) != 1 || listens[0] != "127.0.0.1:0" {
		t.Errorf("server listened on %v, want [127.0.0.1:0]", listens)
	}
	cn.mu.Lock()
	dials := cn.dials
	cn.mu.Unlock()
	if len(dials) != 1 || dials[0] != server.Address().HostPort() {
		t.Errorf("client dialled %v, want [%s]", dials, server.Address().HostPort())
	}

	other := newEnv(t, "other", nil)
	register(t, other, "echo", newEcho())
	cn.mu.Lock()
	cn.refuse = true
	cn.mu.Unlock()
	ref = client.RemoteRef(other.Address(), "echo")
	_, err := ref.Ask(context.Background(), str("x")).Wait(testutil.Context(t, waitFor))
	if !errors.Is(err, errNoRoute) {
		t.Fatalf("ask through a refusing network: %v, want %v", err, errNoRoute)
	}
}

// A transport given WithLockRelease calls it each time it releases a
// peer's lock: a Send to a peer takes that lock, and so do the attach and
// the close of its connection.
func TestWithLockReleaseIsCalledAtEveryPeerLockRelease(t *testing.T) {
	var releases atomic.Int64
	server := newEnv(t, "server", nil)
	register(t, server, "echo", newEcho())
	client := newClientEnv(t, "client", nil, netty.WithLockRelease(func() { releases.Add(1) }))
	ref := lookup(t, client, server.Address(), "echo")
	before := releases.Load()
	if before == 0 {
		t.Fatalf("no peer lock released while the connection was made")
	}
	if got := askString(t, ref, "x"); got != "x" {
		t.Fatalf("echo: got %q", got)
	}
	if after := releases.Load(); after <= before {
		t.Errorf("an ask released no peer lock: %d releases before, %d after", before, after)
	}
}
