// NewEnv: an actor.Env with a TCP transport.

package netty

import "github.com/sparkrpc/sparkrpc/actor"

// NewEnv creates a networked env: a Transport configured by opts, started by
// actor.NewEnv. Unless WithClientMode is given, the env listens (see
// WithBindHost, WithAdvertiseHost and WithPort) and registers the
// endpoint-verifier, so that other envs can look up its endpoints by URI.
func NewEnv(name string, conf *actor.Conf, opts ...Option) (*actor.Env, error) {
	t := NewTransport(opts...)
	envOpts := append([]actor.Option{actor.WithTransport(t)}, t.opts.envOpts...)
	if t.opts.logger != nil {
		envOpts = append(envOpts, actor.WithLogger(*t.opts.logger))
	}
	return actor.NewEnv(name, conf, envOpts...)
}
