package executorpods

// backoff.go holds the allocator's retry delays: exponential, capped, with
// jitter so that the executors of many applications refused by one quota
// do not retry in step.

import "time"

// maxBackoff caps the delay between retries of a refused or failed request.
const maxBackoff = 30 * time.Second

// backoffDelay is the delay before retry number attempt (1 for the first)
// of a request: base doubled at each attempt, at most maxBackoff, of which
// the second half is jitter (r, in [0, 1), picks where in it).
func backoffDelay(attempt int, base time.Duration, r float64) time.Duration {
	d := maxBackoff
	if attempt < 30 && base<<(attempt-1) < maxBackoff && base<<(attempt-1) > 0 {
		d = base << (attempt - 1)
	}
	return d/2 + time.Duration(r*float64(d/2))
}
