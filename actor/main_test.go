package actor_test

import (
	"testing"

	"go.uber.org/goleak"
)

// leakOptions lists the goroutines that may outlive an env's Shutdown.
//
// protoactor's dead-letter logging is throttled by actor.NewThrottle: the
// first dead letter of a throttle period starts a goroutine that waits for
// DeadLetterThrottleInterval (1s) on a ticker and then resets the counter.
// It owns no resources and ends by itself; a test that provokes a dead letter
// (a message to a stopped endpoint, a late reply) can leave it running for up
// to a second. Its name depends on inlining: NewThrottle is inlined into
// NewDeadLetter in normal builds, not with -gcflags=-l. Nothing else is
// ignored.
var leakOptions = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewThrottle.func1.1"),
}

// TestMain fails the package when a goroutine is still running after every
// test, example and benchmark has shut its envs down.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakOptions...)
}
