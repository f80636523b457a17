// The timeouts of a node manager's asks to its resource manager.

package nodemanager

import (
	"fmt"

	"github.com/sparkrpc/sparkrpc/actor"
)

// Keys of the timeouts of a node manager's asks to the resource manager,
// read from its env's conf: each is the key its timeout error names.
const (
	// KeyRegisterTimeout bounds one registration attempt (default 5s;
	// Config.RegisterTimeout bounds them all).
	KeyRegisterTimeout = "spark.sparkrpc.nodemanager.registerTimeout"
	// KeyHeartbeatTimeout bounds the wait for the answer to a heartbeat
	// (default 10s).
	KeyHeartbeatTimeout = "spark.sparkrpc.nodemanager.heartbeatTimeout"
	// KeyUnregisterTimeout bounds the wait for the answer to a node's
	// unregistration (default 5s).
	KeyUnregisterTimeout = "spark.sparkrpc.nodemanager.unregisterTimeout"
)

// rmTimeouts are the timeouts of a node manager's asks to the resource
// manager.
type rmTimeouts struct {
	register, heartbeat, unregister actor.RpcTimeout
}

// readRMTimeouts returns the timeouts of conf's keys.
func readRMTimeouts(conf *actor.Conf) (ts rmTimeouts, err error) {
	for _, k := range []struct {
		t        *actor.RpcTimeout
		key, def string
	}{{&ts.register, KeyRegisterTimeout, "5s"}, {&ts.heartbeat, KeyHeartbeatTimeout, "10s"}, {&ts.unregister, KeyUnregisterTimeout, "5s"}} {
		if *k.t, err = actor.NewRpcTimeout(conf, []string{k.key}, k.def); err != nil {
			return ts, fmt.Errorf("cluster: node manager: %w", err)
		}
	}
	return ts, nil
}
