package cli

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/netty"
)

// envShutdownTimeout bounds the shutdown of a command's env, so that no
// command outlives a signal by more than that.
const envShutdownTimeout = 10 * time.Second

// ShutdownEnv shuts env down, waiting at most envShutdownTimeout.
func ShutdownEnv(env *actor.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), envShutdownTimeout)
	defer cancel()
	_ = env.Shutdown(ctx)
}

// Listen creates the daemon's listening env on port. A port in use is
// retried on port+1, port+2, ... up to spark.port.maxRetries times (Spark's
// Utils.startServiceOnPort), each move logged; past that, or with
// spark.port.maxRetries=0, a port in use is an error naming the key.
func Listen(n cluster.TCPNetwork, name string, conf *actor.Conf, port int, log zerolog.Logger) (*actor.Env, *netty.Transport, error) {
	if conf == nil {
		conf = actor.NewConf()
	}
	retries, err := netty.PortMaxRetries(conf)
	if err != nil {
		return nil, nil, Usagef("%w", err)
	}
	if port == 0 {
		retries = 0 // a random port is never in use
	}
	one := conf.Clone().Set(keyPortMaxRetries, "0") // the moves are made and logged here
	for i := 0; ; i++ {
		p := port + i
		env, t, err := n.ListenTransport(name, one, p)
		if err == nil {
			return env, t, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, err
		}
		if i >= retries || p >= 65535 {
			host := n.BindHost
			if host == "" {
				host = "127.0.0.1"
			}
			if retries == 0 {
				return nil, nil, fmt.Errorf("cannot listen on %s port %d: the port is in use (%s=0: no other port is tried)", host, port, keyPortMaxRetries)
			}
			return nil, nil, fmt.Errorf("cannot listen on %s: ports %d to %d are in use (%s=%d)", host, port, p, keyPortMaxRetries, retries)
		}
		log.Warn().Msgf("Service '%s' could not bind on port %d (in use). Attempting port %d (%s=%d).", name, p, p+1, keyPortMaxRetries, retries)
	}
}

// keyPortMaxRetries is how many successive ports a daemon tries after a
// port in use (Spark's spark.port.maxRetries).
const keyPortMaxRetries = netty.KeyPortMaxRetries

// ParseConfs returns the configuration of a daemon's --properties-file
// and repeated --conf KEY=VALUE flags, and of the environment
// (SPARKRPC_AUTH_SECRET), checking that authentication, when on, has a
// secret.
func ParseConfs(propertiesFile string, kvs []string) (*actor.Conf, error) {
	conf, err := DaemonConf(propertiesFile, kvs)
	if err != nil {
		return nil, err
	}
	if err := authSecretCheck(conf); err != nil {
		return nil, Usagef("%v", err)
	}
	return conf, nil
}
