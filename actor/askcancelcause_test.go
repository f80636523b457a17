package actor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// docs/metrics.md: sparkrpc_ask_failures_total{cause="canceled"} counts
// asks whose context ended; actor's doc: cancelling the context fails the
// ask with the context's cause (context.WithCancelCause). An ask cancelled
// with a cause is still an ask whose context ended. Before, it was counted
// under "other", the cause of messages that could not be sent.
func TestAskCancelledWithCauseCountsAsCanceled(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, server, "silent", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }})
	ref := setupRef(t, client, server, "silent")

	errGone := errors.New("the user went away")
	ctx, cancel := context.WithCancelCause(testutil.Context(t, testTimeout))
	f := ref.AskWithTimeout(ctx, str("x"), actor.InfiniteTimeout())
	cancel(errGone)
	if _, err := f.Result(); !errors.Is(err, errGone) {
		t.Fatalf("cancelled ask = %v, want the cause", err)
	}
	local := register(t, client, "localsilent", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }})
	ctx2, cancel2 := context.WithCancelCause(testutil.Context(t, testTimeout))
	f2 := local.AskWithTimeout(ctx2, str("x"), actor.InfiniteTimeout())
	cancel2(errGone)
	if _, err := f2.Result(); !errors.Is(err, errGone) {
		t.Fatalf("cancelled local ask = %v, want the cause", err)
	}
	m := testutil.Scrape(t, client.MetricsHandler())
	if got := m.Get(t, "sparkrpc_ask_failures_total", "cause", actor.FailureCanceled); got != 2 {
		t.Errorf("ask_failures_total{cause=canceled} = %v, want 2 (other = %v)", got,
			m.Get(t, "sparkrpc_ask_failures_total", "cause", actor.FailureOther))
	}
}
