// Why a connect gave up in time: the error that names the key to raise.

package netty

import (
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// ConnectTimeoutError is a connect that did not complete in time: the dial
// within spark.rpc.io.connectionCreationTimeout, or the handshake (TLS's
// included) within spark.network.auth.rpcTimeout. It names the key. It
// satisfies net.Error with Timeout true and matches actor.ErrTimeout, as an
// ask's timeout does; it does not match context.DeadlineExceeded, which
// would point at the caller's context.
type ConnectTimeoutError struct {
	Peer     string        // the identity ("host:port") dialled
	Stage    string        // "connect", "handshake" or "TLS handshake"
	Duration time.Duration // the timeout
	Key      string        // the configuration key that set it
}

func (e *ConnectTimeoutError) Error() string {
	return fmt.Sprintf("netty: %s to %s timed out after %s. This timeout is controlled by %s", e.Stage, e.Peer, e.Duration, e.Key)
}

// Timeout reports true (net.Error).
func (e *ConnectTimeoutError) Timeout() bool { return true }

// Temporary reports true (net.Error): a later connect may succeed.
func (e *ConnectTimeoutError) Temporary() bool { return true }

// Is reports whether target is actor.ErrTimeout, which every timeout of
// the library matches.
func (e *ConnectTimeoutError) Is(target error) bool { return target == actor.ErrTimeout }
