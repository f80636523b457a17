package endpoints_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A peer that may register executors chooses the name of the reference it
// registers with. The driver counts what it sends there under
// sparkrpc_messages_sent_total{endpoint=NAME}: a peer that registers and
// removes executors, each with a new reference name, must not make the
// driver's registry keep a series per name for ever: past 256 (name, type)
// pairs, sent messages are counted under actor.OtherEndpoints. Before, 2,000
// registrations left 2,000 series.
func TestPeerChosenRefNamesDoNotGrowSentSeries(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf(endpoints.KeyReviveInterval, "1h"))
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	b := newFakeExecutor(t, nw, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	series := func() int {
		mfs, err := env.Metrics().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "sparkrpc_messages_sent_total" {
				return len(mf.GetMetric())
			}
		}
		return 0
	}
	const n = 2000
	for i := range n {
		ref := b.ref.Proto()
		ref.Name = fmt.Sprintf("x%d", i) // any name on its own env
		id := fmt.Sprintf("e%d", i)
		if _, err := actor.AskAs[*messages.BoolReply](ctx, b.driver, &messages.RegisterExecutor{
			ExecutorId: id, ExecutorRef: ref, Hostname: "h", Cores: 1}); err != nil {
			t.Fatalf("register %s: %v", id, err)
		}
		if _, err := b.driver.AskSync(ctx, &messages.RemoveExecutor{ExecutorId: id, Reason: "leaving"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.Executors()) != 0 {
		t.Fatalf("%d executors left", len(d.Executors()))
	}
	if got := series(); got > 300 {
		t.Fatalf("after %d executors registered and removed, none left, sparkrpc_messages_sent_total has %d series", n, got)
	}
}
