package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// A timeout of the transport that is zero would fail every connect,
// handshake or write at once ("timed out after 0s"), so it is refused when
// the env starts, as the ask and lookup timeouts are; and a malformed or
// zero spark.network.timeout, which the transport's timeouts default to, is
// reported under that key, not under a key the operator never set.
// Before, the zeros were accepted and every connection failed, and a
// malformed spark.network.timeout was reported under
// spark.rpc.io.connectionCreationTimeout.
func TestTimeoutConfRefusedAtStart(t *testing.T) {
	// The ask and lookup timeouts set, so that the transport is the first
	// to read spark.network.timeout.
	base := func() *actor.Conf {
		return actor.NewConf().Set(actor.KeyAskTimeout, "10s").Set(actor.KeyLookupTimeout, "10s")
	}
	for _, tc := range []struct {
		key, value string
	}{
		{netty.KeyConnectionCreationTimeout, "0"},
		{netty.KeyConnectionCreationTimeout, "0ms"},
		{netty.KeyAuthTimeout, "0"},
		{netty.KeyConnectionTimeout, "0s"},
		{actor.KeyNetworkTimeout, "0"},
		{actor.KeyNetworkTimeout, "abc"},
		{actor.KeyNetworkTimeout, "10x"},
		{actor.KeyNetworkTimeout, ""},
	} {
		env, err := netty.NewEnv("bad", base().Set(tc.key, tc.value), netty.WithLogger(testLogger(t)))
		if env != nil {
			shutdown(t, env)
		}
		var ce *actor.ConfError
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Value != tc.value {
			t.Errorf("%s=%q: NewEnv err = %v; want a *actor.ConfError naming %s and %q", tc.key, tc.value, err, tc.key, tc.value)
		}
	}
	// The keys that fall back on spark.network.timeout still do.
	env, err := netty.NewEnv("ok", base().Set(actor.KeyNetworkTimeout, "30"), netty.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatalf("spark.network.timeout=30: %v", err)
	}
	shutdown(t, env)
}
