// Ask statistics: the latency histogram and the failures by cause.

package actor

import (
	"context"
	"errors"
	"math/bits"
	"sync/atomic"
	"time"
)

// Ask failure causes, the values of the cause label of
// sparkrpc_ask_failures_total.
const (
	// FailureTimeout: the ask's RpcTimeout passed (*RpcTimeoutError).
	FailureTimeout = "timeout"
	// FailureDisconnect: the connection the ask depended on closed
	// (ErrConnectionClosed).
	FailureDisconnect = "disconnect"
	// FailureRemoteError: the endpoint failed the ask (its handler returned
	// an error or panicked, or it called SendFailure), locally or on
	// another env.
	FailureRemoteError = "remote_error"
	// FailureNotFound: no endpoint of that name (ErrEndpointNotFound).
	FailureNotFound = "not_found"
	// FailureStopped: the env stopped (ErrEnvStopped).
	FailureStopped = "stopped"
	// FailureCanceled: the ask's context ended.
	FailureCanceled = "canceled"
	// FailureOther: anything else, such as a message that could not be sent
	// (too large, a full outbound queue, a failed connect).
	FailureOther = "other"
)

// failureCauses lists the causes in the order of askStats.failures.
var failureCauses = [...]string{FailureTimeout, FailureDisconnect, FailureRemoteError, FailureNotFound,
	FailureStopped, FailureCanceled, FailureOther}

// failureCause returns the index in failureCauses of err's cause;
// fromEndpoint is true when the endpoint itself failed the ask.
func failureCause(err error, fromEndpoint bool) int {
	var te *RpcTimeoutError
	var aborted *askAbortedError
	switch {
	case errors.As(err, &aborted):
		return 5
	case errors.As(err, &te):
		return 0
	case errors.Is(err, ErrConnectionClosed):
		return 1
	case errors.Is(err, ErrEndpointNotFound):
		return 3
	case errors.Is(err, ErrEnvStopped):
		return 4
	case fromEndpoint:
		return 2
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return 5
	}
	return 6
}

// askBuckets is the number of buckets of the ask latency histogram: upper
// bounds 1µs, 2µs, 4µs, ... 2^(askBuckets-2)µs (about 134 s), and +Inf.
const askBuckets = 29

// askStats are an env's ask counters. The histogram has fixed power-of-two
// buckets, so that recording an ask costs a shift and two atomic adds
// rather than a search; it is turned into a Prometheus histogram when
// scraped.
type askStats struct {
	clock    time.Time // the env's start: asks record their start as time.Since(clock)
	buckets  [askBuckets]atomic.Uint64
	sumNanos atomic.Uint64
	failures [len(failureCauses)]atomic.Uint64
}

// now returns the time since the env started (monotonic).
func (s *askStats) now() time.Duration { return time.Since(s.clock) }

// localAskSampling: one local ask in localAskSampling is timed for the
// latency histogram. A local ask takes a microsecond or two, and reading the
// clock twice would add several percent to it (more on a virtual machine's
// clock); a remote ask takes tens of microseconds and is always timed.
const localAskSampling = 16

// completed records an ask that completed with err (nil on success); start
// is when it was made (askStats.now), or 0 when it was not timed.
func (s *askStats) completed(start time.Duration, err error, fromEndpoint bool) {
	if start != 0 {
		s.observe(s.now() - start)
	}
	if err != nil {
		s.failures[failureCause(err, fromEndpoint)].Add(1)
	}
}

// observe records an ask latency.
func (s *askStats) observe(d time.Duration) {
	d = max(d, 0)
	us := (uint64(d) + 999) / 1000
	i := 0
	if us > 1 {
		i = min(bits.Len64(us-1), askBuckets-1)
	}
	s.buckets[i].Add(1)
	s.sumNanos.Add(uint64(d))
}

// histogram returns the count, the sum in seconds and the cumulative
// bucket counts keyed by upper bound in seconds (+Inf left out, as
// prometheus.NewConstHistogram wants).
func (s *askStats) histogram() (count uint64, sum float64, cum map[float64]uint64) {
	cum = make(map[float64]uint64, askBuckets-1)
	for i := range askBuckets {
		count += s.buckets[i].Load()
		if i < askBuckets-1 {
			cum[float64(uint64(1)<<i)*1e-6] = count
		}
	}
	return count, float64(s.sumNanos.Load()) / 1e9, cum
}
