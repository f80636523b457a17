package history_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine is still running after every
// test: providers, drivers, executors and envs must all be stopped.
// protoactor's dead-letter throttle ends by itself within its period.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewThrottle.func1.1"),
	)
}
