package cluster

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/netty"
)

// Network creates the envs of the cluster's processes. The zero value
// listens on loopback with random ports.
type Network struct {
	// BindHost is the host listening envs bind to (default 127.0.0.1).
	BindHost string
	// AdvertiseHost is the host other processes use to reach them (default
	// BindHost).
	AdvertiseHost string
	// Logger is passed to the envs.
	Logger *zerolog.Logger
}

func (n Network) opts() []netty.Option {
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
	return o
}

// Listen creates a listening env on port (0: random).
func (n Network) Listen(name string, conf *actor.Conf, port int) (*actor.Env, error) {
	return netty.NewEnv(name, conf, append(n.opts(), netty.WithPort(port))...)
}

// Client creates an env in client mode (it does not listen).
func (n Network) Client(name string, conf *actor.Conf) (*actor.Env, error) {
	o := []netty.Option{netty.WithClientMode()}
	if n.Logger != nil {
		o = append(o, netty.WithLogger(*n.Logger))
	}
	return netty.NewEnv(name, conf, o...)
}

// ExecutorEnvFactory returns the env factory an executor process uses:
// client-mode envs.
func (n Network) ExecutorEnvFactory() endpoints.EnvFactory {
	return func(name string, conf *actor.Conf) (*actor.Env, error) { return n.Client(name, conf) }
}

func shutdownEnv(env *actor.Env, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil {
		log.Debug().Err(err).Msg("env shutdown")
	}
}
