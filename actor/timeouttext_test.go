package actor_test

import (
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// Spark's timed-out ask reads "Cannot receive any reply from HOST:PORT in
// 120 seconds. This timeout is controlled by spark.rpc.askTimeout" (the
// Scala FiniteDuration of the RpcTimeout): the text users search their logs
// and Spark's troubleshooting notes for. Before, it read "in 2m0s".
func TestRpcTimeoutErrorTextIsSparks(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{120 * time.Second, "in 120 seconds."},
		{time.Second, "in 1 second."},
		{10 * time.Millisecond, "in 10 milliseconds."},
		{1500 * time.Millisecond, "in 1500 milliseconds."},
		{1500 * time.Nanosecond, "in 1500 nanoseconds."},
	} {
		err := &actor.RpcTimeoutError{Addr: "host:7077", Duration: tc.d, Key: actor.KeyAskTimeout}
		want := "Cannot receive any reply from host:7077 " + tc.want + " This timeout is controlled by spark.rpc.askTimeout"
		if got := err.Error(); got != want {
			t.Errorf("Error() = %q\n want %q", got, want)
		}
	}
}
