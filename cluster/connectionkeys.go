package cluster

// This file holds the keys an executor must share with its driver before
// it can connect to it.

import (
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

// IsConnectionKey reports whether key is one an executor must agree on with
// its driver before it can connect (spark.auth*, spark.network.*,
// spark.rpc.*, spark.ssl.*): the configuration it is started with, before
// it fetches the rest from the driver.
func IsConnectionKey(key string) bool {
	for _, prefix := range []string{"spark.auth", "spark.network.", "spark.rpc.", "spark.ssl."} {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}

// SubConf returns a Conf of the keys of conf that keep accepts, with their
// values: what a process passes on of its configuration (the connection
// keys to an executor, the TLS keys to embedded daemons).
func SubConf(conf *actor.Conf, keep func(key string) bool) *actor.Conf {
	out := actor.NewConf()
	for k, v := range conf.All() {
		if keep(k) {
			out.Set(k, v)
		}
	}
	return out
}
