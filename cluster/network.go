package cluster

// This file holds Network, how the cluster's processes create their envs,
// and TCPNetwork, its implementation over netty's TCP transport.

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// Network creates the envs of the cluster's processes: the listening envs of
// drivers, application masters, resource and node managers, and the
// client-mode envs of submitting clients and executors. TCPNetwork is the
// implementation over netty's TCP transport; a cluster manager or a test can
// plug in another (for example one over actor.MemNetwork, when every env is
// in one process). An executor's endpoints.EnvFactory is the method value
// n.Client.
//
// Implementations must be safe for concurrent use.
type Network interface {
	// Listen creates an env that listens on port (0: a free port) and
	// advertises an address other processes can reach.
	Listen(name string, conf *actor.Conf, port int) (*actor.Env, error)
	// Client creates an env in client mode: it does not listen and is
	// reachable only by the peers it has contacted.
	Client(name string, conf *actor.Conf) (*actor.Env, error)
}

// TCPNetwork is the Network over netty's TCP transport. The zero value
// listens on loopback (127.0.0.1) with the port asked for, and its envs use
// netty's default logger.
type TCPNetwork struct {
	// BindHost is the host listening envs bind to (default 127.0.0.1).
	BindHost string
	// AdvertiseHost is the host other processes use to reach them (default
	// BindHost).
	AdvertiseHost string
	// Logger is passed to the envs (default: netty's).
	Logger *zerolog.Logger
	// AuthKeys, when set, resolves the key ids that peers dialling the
	// listening envs present (netty.WithAuthKeys): a resource manager's
	// AppKeys.Lookup, or a client-mode driver's, whose application master
	// dials it with the application's id.
	AuthKeys func(keyID string) (secret []byte, ok bool)
}

var _ Network = TCPNetwork{}

func (n TCPNetwork) opts() []netty.Option {
	var o []netty.Option
	if n.BindHost != "" {
		o = append(o, netty.WithBindHost(n.BindHost))
	}
	if n.AdvertiseHost != "" {
		o = append(o, netty.WithAdvertiseHost(n.AdvertiseHost))
	}
	if n.Logger != nil {
		o = append(o, netty.WithLogger(*n.Logger))
	}
	if n.AuthKeys != nil {
		o = append(o, netty.WithAuthKeys(n.AuthKeys))
	}
	return o
}

// Listen creates a listening env on port (0: random).
func (n TCPNetwork) Listen(name string, conf *actor.Conf, port int) (*actor.Env, error) {
	return netty.NewEnv(name, conf, append(n.opts(), netty.WithPort(port))...)
}

// ListenTransport is Listen that also returns the env's transport, whose
// PeerKeyID a resource manager or node manager authorises asks with.
func (n TCPNetwork) ListenTransport(name string, conf *actor.Conf, port int) (*actor.Env, *netty.Transport, error) {
	t := netty.NewTransport(append(n.opts(), netty.WithPort(port))...)
	opts := []actor.Option{actor.WithTransport(t)}
	if n.Logger != nil {
		opts = append(opts, actor.WithLogger(*n.Logger))
	}
	env, err := actor.NewEnv(name, conf, opts...)
	if err != nil {
		return nil, nil, err
	}
	return env, t, nil
}

// Client creates an env in client mode (it does not listen).
func (n TCPNetwork) Client(name string, conf *actor.Conf) (*actor.Env, error) {
	o := []netty.Option{netty.WithClientMode()}
	if n.Logger != nil {
		o = append(o, netty.WithLogger(*n.Logger))
	}
	return netty.NewEnv(name, conf, o...)
}

// ShutdownEnv shuts env down, waiting at most 10s, and logs a failure.
func ShutdownEnv(env *actor.Env, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil {
		log.Debug().Err(err).Msg("env shutdown")
	}
}
