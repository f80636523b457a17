package actor_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
)

// A negative spark.rpc.netty.dispatcher.numThreads is refused, naming the
// key, as Spark refuses it (its thread pool cannot have -1 threads): it is
// not replaced by the default, max(2, GOMAXPROCS), as an unset key is.
// Before, it became the default.
func TestNewEnvNegativeDispatcherThreads(t *testing.T) {
	e, err := actor.NewEnv("bad", actor.NewConf().Set(actor.KeyDispatcherThreads, "-1"), actor.WithLogger(testLogger(t)))
	if e != nil {
		shutdown(t, e)
	}
	var ce *actor.ConfError
	if !errors.As(err, &ce) || ce.Key != actor.KeyDispatcherThreads || ce.Value != "-1" {
		t.Fatalf("NewEnv with %s=-1 = %v, want a *ConfError naming it", actor.KeyDispatcherThreads, err)
	}
}
