package netty_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// Spark's TransportConf.connectionCreationTimeoutMs defaults to
// spark.rpc.io.connectionTimeout (which defaults to spark.network.timeout):
// a user who lowers spark.rpc.io.connectionTimeout gets connects bounded
// by it too. Before, a connect waited for spark.network.timeout (120 s).
func TestConnectionCreationTimeoutDefaultsToConnectionTimeout(t *testing.T) {
	ctx := testutil.Context(t, waitFor)
	conf := actor.NewConf().Set(netty.KeyConnectionTimeout, "100ms")
	cli := newClientEnv(t, "cli", conf, netty.WithNetwork(stallNetwork{}))
	_, err := cli.RemoteRef(actor.NewRpcAddress("127.0.0.1", 9), "x").
		AskSyncWithTimeout(ctx, str("x"), actor.RpcTimeout{Duration: 3 * time.Second, Key: "test.ask"})
	var ce *netty.ConnectTimeoutError
	if !errors.As(err, &ce) || ce.Duration != 100*time.Millisecond {
		t.Fatalf("ask = %v; want a *netty.ConnectTimeoutError after spark.rpc.io.connectionTimeout (100ms)", err)
	}
	checkConnectTimeout(t, ctx, err, netty.KeyConnectionTimeout)
}
