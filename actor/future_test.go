package actor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

func TestFutureManyWaiters(t *testing.T) {
	// Unlike protoactor's Future, every waiter is released.
	e := newEnv(t, nil)
	pending := make(chan *actor.CallContext, 1)
	ref := register(t, e, "slow", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		pending <- ctx
		return nil
	}})
	f := ref.Ask(testutil.Context(t, testTimeout), str("q"))
	const waiters = 10
	results := make(chan string, 2*waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			var res proto.Message
			var err error
			if i%2 == 0 {
				res, err = f.Result()
			} else {
				res, err = f.Wait(context.Background())
			}
			if err != nil {
				results <- err.Error()
				return
			}
			results <- text(res)
		})
	}
	testutil.Recv(t, pending, testTimeout, "the ask").Reply(str("a"))
	for range waiters {
		if got := testutil.Recv(t, results, testTimeout, "a waiter"); got != "a" {
			t.Errorf("a waiter got %q", got)
		}
	}
	wg.Wait()
}

func TestFutureWaitBoundedByContext(t *testing.T) {
	e := newEnv(t, nil)
	pending := make(chan *actor.CallContext, 1)
	ref := register(t, e, "slow", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		pending <- ctx
		return nil
	}})
	f := ref.AskWithTimeout(testutil.Context(t, testTimeout), str("q"), actor.InfiniteTimeout())
	cc := testutil.Recv(t, pending, testTimeout, "the ask")
	ctx, cancel := context.WithCancelCause(context.Background())
	enough := errors.New("waited enough")
	cancel(enough)
	if _, err := f.Wait(ctx); !errors.Is(err, enough) {
		t.Fatalf("Wait with an ended context = %v, want %v", err, enough)
	}
	// The ask itself goes on and still gets its reply.
	cc.Reply(str("late"))
	if res, err := f.Wait(testutil.Context(t, testTimeout)); err != nil || text(res) != "late" {
		t.Fatalf("ask after an abandoned Wait = %v, %v", res, err)
	}
}

func TestAsksWhileStopping(t *testing.T) {
	// Asks racing with Stop or Shutdown each complete, with the reply or a
	// typed error, without any timeout (they have none).
	for _, how := range []string{"Stop", "Shutdown"} {
		for _, threads := range []int{0, 4} {
			t.Run(fmt.Sprintf("%s/threads=%d", how, threads), func(t *testing.T) {
				for iter := range 10 {
					e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, "2"))
					var endpoint actor.Endpoint = &testEndpoint{}
					if threads > 0 {
						endpoint = isolatedEndpoint{testEndpoint: &testEndpoint{}, threads: threads}
					}
					ref := register(t, e, "echo", endpoint)
					var answered, refused atomic.Int64
					var wg sync.WaitGroup
					ready := make(chan struct{})
					for range 5 {
						wg.Go(func() {
							<-ready
							for range 40 {
								f := ref.AskWithTimeout(context.Background(), str("q"), actor.InfiniteTimeout())
								_, err := f.Wait(testutil.Context(t, testTimeout))
								switch {
								case err == nil:
									answered.Add(1)
								case errors.Is(err, actor.ErrEndpointNotFound), errors.Is(err, actor.ErrEnvStopped):
									refused.Add(1)
								default:
									t.Errorf("iteration %d: ask failed with %v", iter, err)
									return
								}
							}
						})
					}
					close(ready)
					if how == "Stop" {
						if err := e.Stop(ref); err != nil {
							t.Fatal(err)
						}
					} else {
						shutdown(t, e)
					}
					wg.Wait()
					if n := answered.Load() + refused.Load(); n != 200 {
						t.Fatalf("iteration %d: %d asks completed, want 200", iter, n)
					}
					shutdown(t, e)
				}
			})
		}
	}
}

func TestNoGoroutineLeakAfterShutdown(t *testing.T) {
	// Everything an env starts (loops, dedicated loops and their workers,
	// timers of asks, network links) ends with its Shutdown.
	defer goleak.VerifyNone(t, append(leakOptions, goleak.IgnoreCurrent())...)
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	for i, threads := range []int{0, 1, 4} {
		ep := &testEndpoint{}
		var endpoint actor.Endpoint = ep
		if threads > 0 {
			endpoint = isolatedEndpoint{testEndpoint: ep, threads: threads}
		}
		name := fmt.Sprintf("ep-%d", i)
		register(t, server, name, endpoint)
		ref := setupRef(t, client, server, name)
		askString(t, ref, "hi")
		// An ask left pending when the env goes away.
		_ = ref.AskWithTimeout(context.Background(), str("q"), actor.RpcTimeout{Duration: testTimeout, Key: "k"})
	}
	pending := register(t, client, "pending", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }})
	_ = pending.Ask(context.Background(), str("never answered"))
	shutdown(t, client)
	shutdown(t, server)
}
