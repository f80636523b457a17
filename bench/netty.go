package bench

import (
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

func init() {
	newNetworkedEnv = func(h *harness, name string) (*actor.Env, error) {
		return netty.NewEnv(name, nil, netty.WithBindHost("127.0.0.1"), netty.WithPort(0), netty.WithLogger(h.log))
	}
}
