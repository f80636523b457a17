package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// A negative spark.port.maxRetries is refused, naming the key, as the web
// UIs and the daemons refuse it: it is not taken for 0.
// Before, it was taken for 0.
func TestNegativePortMaxRetries(t *testing.T) {
	env, err := netty.NewEnv("bad", actor.NewConf().Set(netty.KeyPortMaxRetries, "-1"), netty.WithLogger(testLogger(t)))
	if env != nil {
		shutdown(t, env)
	}
	var ce *actor.ConfError
	if !errors.As(err, &ce) || ce.Key != netty.KeyPortMaxRetries || ce.Value != "-1" {
		t.Fatalf("NewEnv with %s=-1 = %v, want a *actor.ConfError naming it", netty.KeyPortMaxRetries, err)
	}
}
