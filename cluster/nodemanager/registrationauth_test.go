package nodemanager_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/netty"
)

// A node manager whose secret the resource manager refuses fails with an
// error that says so, and that errors.Is matches to netty.ErrAuthFailed:
// not "the resource manager did not answer", which sends the operator
// looking for a network problem when the resource manager answered, and
// refused the node's authentication, at every attempt. Before, it said
// exactly that, with the cause formatted away.
func TestNodeManagerRegistrationRefusedSecretSaysSo(t *testing.T) {
	authConf := func(secret string) *actor.Conf {
		return actor.NewConf().Set(netty.KeyAuthenticate, "true").Set(netty.KeyAuthenticateSecret, secret)
	}
	rm, err := netty.NewEnv("rm", authConf("the resource manager's secret"), netty.WithPort(0))
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Shutdown(context.Background())
	env, transport, err := cluster.TCPNetwork{}.ListenTransport("nm", authConf("another secret"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Shutdown(context.Background())
	log := zerolog.Nop()
	_, err = nodemanager.Start(context.Background(), env, nodemanager.Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 512, Cores: 1}, Dir: t.TempDir(), RegisterTimeout: time.Second, Logger: &log,
		PeerKeyID: transport.PeerKeyID})
	if !errors.Is(err, cluster.ErrRegistrationFailed) {
		t.Fatalf("error %v, want ErrRegistrationFailed", err)
	}
	if !errors.Is(err, netty.ErrAuthFailed) {
		t.Errorf("error %v does not match netty.ErrAuthFailed", err)
	}
	if strings.Contains(err.Error(), "did not answer") {
		t.Errorf("error says the resource manager did not answer, when it refused the node's secret: %v", err)
	}
}
