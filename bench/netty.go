package bench

import (
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// newNetworkedEnv starts an env on netty's transport, listening on 127.0.0.1
// port 0 and logging to the harness's logger: the envs of the remote and
// scheduler scenarios. Its connections use TLS when the scenario being
// measured does (see harness.connTLS).
func newNetworkedEnv(h *harness, name string) (*actor.Env, error) {
	var conf *actor.Conf
	if h.connTLS != nil {
		conf = h.connTLS.conf()
	}
	env, err := netty.NewEnv(name, conf, netty.WithBindHost("127.0.0.1"), netty.WithPort(0), netty.WithLogger(h.log),
		netty.WithEnvOptions(h.metrics.envOptions()...))
	h.metrics.track(env)
	return env, err
}
