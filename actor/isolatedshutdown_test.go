package actor_test

import (
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// idleIsolated does nothing, on a loop of its own.
type idleIsolated struct{}

func (idleIsolated) Receive(*actor.Context, proto.Message) error { return nil }
func (idleIsolated) ThreadCount() int                            { return 1 }

// loopWorker matches the stack of a goroutine that a loop started.
var loopWorker = regexp.MustCompile(`created by github\.com/sparkrpc/sparkrpc/actor\.new\w*Dispatcher`)

// Shutdown waits for the loops of its endpoints, an Isolated endpoint's own
// loop too. Before, it waited only until the endpoint had stopped, and the
// loop's goroutine could still be in the endpoint's code when Shutdown
// returned. The window is narrow, so the test tries many times and fails
// at the first loop it finds still running.
func TestShutdownWaitsForAnIsolatedEndpointsLoop(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := range n {
		e, err := actor.NewEnv("iso", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.RegisterEndpoint("iso", idleIsolated{}); err != nil {
			t.Fatal(err)
		}
		if err := e.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			// A loop's goroutine still in the endpoint's code (its cell or
			// mailbox), not one that is only returning.
			if loopWorker.MatchString(g) &&
				(strings.Contains(g, "actor.(*cell)") || strings.Contains(g, "actor.(*mailbox)")) {
				t.Fatalf("try %d: a loop's goroutine is still running after Shutdown returned:\n%s", i, g)
			}
		}
	}
}
