package main

import (
	"context"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// envShutdownTimeout bounds the shutdown of a command's env, so that no
// command outlives a signal by more than that.
const envShutdownTimeout = 10 * time.Second

// shutdownEnv shuts env down, waiting at most envShutdownTimeout.
func shutdownEnv(env *actor.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), envShutdownTimeout)
	defer cancel()
	_ = env.Shutdown(ctx)
}
