// RpcTimeout: a timeout that names the configuration key that set it.

package actor

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// RpcTimeout is a timeout together with the configuration key that set it, so
// that a timed-out ask can say which key to change: Spark's RpcTimeout.
type RpcTimeout struct {
	Duration time.Duration
	Key      string
}

// infiniteDuration is the duration of InfiniteTimeout: no ask outlives it.
const infiniteDuration time.Duration = math.MaxInt64

// InfiniteTimeout returns a timeout that never expires (an ask made with it
// waits for its reply, its context or the env's shutdown).
func InfiniteTimeout() RpcTimeout { return RpcTimeout{Duration: infiniteDuration, Key: "infinite"} }

// Validate returns ErrInvalidTimeout for a zero or negative duration.
func (t RpcTimeout) Validate() error {
	if t.Duration <= 0 {
		return fmt.Errorf("%w: %s (%s)", ErrInvalidTimeout, t.Duration, t.Key)
	}
	return nil
}

func (t RpcTimeout) infinite() bool { return t.Duration >= infiniteDuration }

// String returns "DURATION (KEY)".
func (t RpcTimeout) String() string { return fmt.Sprintf("%s (%s)", t.Duration, t.Key) }

// NewRpcTimeout builds a timeout from the first of keys that is set in conf
// (a bare number is in seconds). When none is set it uses def, labelled with
// the first key; when def is "" as well it returns a *ConfError whose reason
// is ErrKeyNotSet. A zero or negative value is a *ConfError whose reason is
// ErrInvalidTimeout, so that it fails where the configuration is read
// rather than every ask made with it.
func NewRpcTimeout(conf *Conf, keys []string, def string) (RpcTimeout, error) {
	if len(keys) == 0 {
		return RpcTimeout{}, fmt.Errorf("%w: no configuration key", ErrInvalidTimeout)
	}
	for _, k := range keys {
		if v, ok := conf.Lookup(k); ok {
			d, err := parseTimeout(v)
			if err != nil {
				return RpcTimeout{}, &ConfError{Key: k, Value: v, Err: err}
			}
			return RpcTimeout{Duration: d, Key: k}, nil
		}
	}
	if def == "" {
		return RpcTimeout{}, &ConfError{Key: keys[0], Err: ErrKeyNotSet}
	}
	d, err := parseTimeout(def)
	if err != nil {
		return RpcTimeout{}, &ConfError{Key: keys[0], Value: def, Err: err}
	}
	return RpcTimeout{Duration: d, Key: keys[0]}, nil
}

// parseTimeout parses a timeout's value (a bare number is in seconds),
// which must be positive.
func parseTimeout(v string) (time.Duration, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "-") {
		return 0, fmt.Errorf("%w: must be positive", ErrInvalidTimeout)
	}
	d, err := ParseTime(v, time.Second)
	if err != nil {
		return 0, err
	}
	if d == 0 {
		return 0, fmt.Errorf("%w: must be positive", ErrInvalidTimeout)
	}
	return d, nil
}

// AskTimeout returns the default ask timeout of conf:
// spark.rpc.askTimeout, else spark.network.timeout, else 120s.
func AskTimeout(conf *Conf) (RpcTimeout, error) {
	return NewRpcTimeout(conf, []string{KeyAskTimeout, KeyNetworkTimeout}, defaultNetworkTimeout)
}

// LookupTimeout returns the endpoint lookup timeout of conf:
// spark.rpc.lookupTimeout, else spark.network.timeout, else 120s.
func LookupTimeout(conf *Conf) (RpcTimeout, error) {
	return NewRpcTimeout(conf, []string{KeyLookupTimeout, KeyNetworkTimeout}, defaultNetworkTimeout)
}
