// Reconnect backoff: after a failed connect, how long Send to that peer fails fast.

package netty

import (
	"fmt"
	"time"
)

// ConnectError is the failure of a connect to a listening peer. Every
// message queued for the connect fails with it (an ask at once, a one-way
// message counted as dropped); then, for a backoff window, Send to that peer
// fails at once with the same error instead of dialling again, so that a
// peer that is down is not redialled by every message sent to it. The
// window starts at spark.rpc.io.connectBackoff, doubles with every failed
// connect up to spark.rpc.io.connectBackoffMax, is randomised by ±50% so
// that many senders do not redial in step, and is forgotten when a
// connection to the peer (either way) succeeds.
type ConnectError struct {
	Peer    string        // the identity ("host:port") dialled
	Err     error         // why the connect failed
	Backoff time.Duration // the backoff window that began with this failure
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("netty: failed to connect to %s: %v", e.Peer, e.Err)
}

// Unwrap returns the cause of the failure.
func (e *ConnectError) Unwrap() error { return e.Err }

// backoffWindow returns the window after the failures-th failed connect in
// a row: initial doubled failures-1 times, at most maxWait, scaled by a
// factor between 0.5 and 1.5 drawn from jitter (in [0, 1)) and capped at
// maxWait again. A zero initial turns backoff off.
func backoffWindow(initial, maxWait time.Duration, failures int, jitter float64) time.Duration {
	if initial <= 0 || failures <= 0 {
		return 0
	}
	d := initial
	for i := 1; i < failures && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	return min(time.Duration(float64(d)*(0.5+jitter)), maxWait)
}
