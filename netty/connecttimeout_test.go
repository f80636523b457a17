package netty_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// stallNetwork listens on TCP but never completes a dial: DialContext
// waits for its context, as a dial to a host that drops SYNs does.
type stallNetwork struct{}

func (stallNetwork) Listen(network, address string) (net.Listener, error) {
	return net.Listen(network, address)
}

func (stallNetwork) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// checkConnectTimeout fails unless err is a connect's timeout that names
// key: a *netty.ConnectTimeoutError, a net.Error whose Timeout is true,
// matching actor.ErrTimeout and not the caller's live context's
// context.DeadlineExceeded.
func checkConnectTimeout(t *testing.T, ctx context.Context, err error, key string) {
	t.Helper()
	var ce *netty.ConnectTimeoutError
	var ne net.Error
	switch {
	case !errors.As(err, &ce) || ce.Key != key || !strings.Contains(err.Error(), key):
		t.Errorf("error %q: want a *netty.ConnectTimeoutError naming %s", err, key)
	case !errors.As(err, &ne) || !ne.Timeout():
		t.Errorf("error %q: not a net.Error with Timeout true", err)
	case !errors.Is(err, actor.ErrTimeout):
		t.Errorf("error %q does not match actor.ErrTimeout", err)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		t.Errorf("error %q matches context.DeadlineExceeded although the caller's context is live", err)
	}
}

// A dial that does not complete within spark.rpc.io.connectionCreationTimeout
// fails with an error that names the key. Before, it was "context deadline
// exceeded", as if the caller's own context had ended.
func TestConnectTimeoutNamesItsKey(t *testing.T) {
	ctx := testutil.Context(t, waitFor)
	conf := actor.NewConf().Set(netty.KeyConnectionCreationTimeout, "100ms")
	cli := newClientEnv(t, "cli", conf, netty.WithNetwork(stallNetwork{}))
	_, err := cli.RemoteRef(actor.NewRpcAddress("127.0.0.1", 9), "x").AskSync(ctx, str("x"))
	checkConnectTimeout(t, ctx, err, netty.KeyConnectionCreationTimeout)
}

// A peer that accepts the connection and never answers the handshake fails
// the connect within spark.network.auth.rpcTimeout, with an error that names
// the key. Before, it was the socket's "i/o timeout".
func TestHandshakeTimeoutNamesItsKey(t *testing.T) {
	ctx := testutil.Context(t, waitFor)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	t.Cleanup(func() {
		l.Close()
		for c := range accepted {
			c.Close()
		}
	})
	cli := newClientEnv(t, "cli", actor.NewConf().Set(netty.KeyAuthTimeout, "200ms"))
	addr, err := actor.ParseHostPort(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = cli.RemoteRef(addr, "x").AskSync(ctx, str("x"))
	checkConnectTimeout(t, ctx, err, netty.KeyAuthTimeout)
}
