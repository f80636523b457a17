package actor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// neverReplies never answers an ask.
func neverReplies() *testEndpoint {
	return &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }}
}

func TestAskTimeoutLongerThanASweep(t *testing.T) {
	// Timeouts long enough to be armed by the env's sweeper, not at once,
	// still fire, no earlier than their duration, naming their key once.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, server, "silent", neverReplies())
	refs := map[string]*actor.Ref{
		"local":  register(t, client, "silent", neverReplies()),
		"remote": setupRef(t, client, server, "silent"),
	}
	for name, ref := range refs {
		t.Run(name, func(t *testing.T) {
			for _, d := range []time.Duration{25 * time.Millisecond, 60 * time.Millisecond} {
				key := fmt.Sprintf("spark.test.%s.timeout", name)
				start := time.Now()
				_, err := ref.AskSyncWithTimeout(context.Background(), str("q"), actor.RpcTimeout{Duration: d, Key: key})
				if elapsed := time.Since(start); elapsed < d {
					t.Errorf("timeout of %v fired after %v", d, elapsed)
				}
				checkTimeoutError(t, err, key)
			}
		})
	}
}

func TestManyAsksEachTimeOutOnce(t *testing.T) {
	// Asks made while the sweeper is busy and idle alike all time out.
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, server, "silent", neverReplies())
	ref := setupRef(t, client, server, "silent")
	const key = "spark.test.many.timeout"
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if i%2 == 0 {
				// Spread the asks over several ticks of the sweeper.
				<-time.After(time.Duration(i) * time.Millisecond)
			}
			f := ref.AskWithTimeout(context.Background(), str("q"), actor.RpcTimeout{Duration: 30 * time.Millisecond, Key: key})
			select {
			case <-f.Done():
			case <-time.After(testTimeout):
				t.Errorf("ask %d did not time out", i)
				return
			}
			_, err := f.Result()
			checkTimeoutError(t, err, key)
		})
	}
	wg.Wait()
}

func TestCancelledAskClosesDone(t *testing.T) {
	// Cancelling the context of an ask with no timeout completes it: Result
	// at once, and Done without anyone waiting on Result.
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprintf("remote=%v", remote), func(t *testing.T) {
			n := actor.NewMemNetwork()
			server := serverEnv(t, n, "host1", 1)
			client := clientEnv(t, n)
			register(t, server, "silent", neverReplies())
			ref := register(t, client, "silent", neverReplies())
			if remote {
				ref = setupRef(t, client, server, "silent")
			}
			cause := errors.New("no longer needed")
			ctx, cancel := context.WithCancelCause(context.Background())
			f := ref.AskWithTimeout(ctx, str("q"), actor.InfiniteTimeout())
			ctx2, cancel2 := context.WithCancelCause(context.Background())
			g := ref.AskWithTimeout(ctx2, str("q"), actor.InfiniteTimeout())
			cancel(cause)
			cancel2(cause)
			if _, err := f.Result(); !errors.Is(err, cause) {
				t.Errorf("Result of a cancelled ask = %v, want %v", err, cause)
			}
			testutil.Recv(t, g.Done(), testTimeout, "Done of a cancelled ask")
			if _, err := g.Result(); !errors.Is(err, cause) {
				t.Errorf("Result of a cancelled ask = %v, want %v", err, cause)
			}
		})
	}
}
