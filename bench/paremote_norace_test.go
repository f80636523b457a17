//go:build !race

package bench

import (
	"context"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The protoactor-remote baseline is skipped under the race detector (see
// raceUnavailable), so these tests are built without it; CI runs them in a
// go test invocation of its own without -race.

// Remote pairs with connections in both directions (an ask's reply dials
// back) shut down without a panic. Shutting both remotes down at once made
// protoactor panic with "send on closed channel" within a few hundred pairs;
// a panic in any goroutine fails the test binary.
func TestProtoactorRemoteBaselineShutsDownCleanly(t *testing.T) {
	h := &harness{cfg: QuickConfig(), log: zerolog.Nop()}
	pairs := 150
	if testing.Short() {
		pairs = 20
	}
	for i := range pairs {
		pair, target, err := newRemoteActor(h, 16, protoactor.PropsFromFunc(func(c protoactor.Context) {
			if _, ok := c.Message().(*messages.BenchPing); ok {
				c.Respond(&messages.BenchPong{})
			}
		}))
		if err != nil {
			t.Fatalf("pair %d: %v", i, err)
		}
		res, err := pair.a.Root.RequestFuture(target, &messages.BenchPing{}, askTimeoutBaseline).Result()
		pair.close()
		if err != nil {
			t.Fatalf("pair %d: ask: %v", i, err)
		}
		if _, ok := res.(*messages.BenchPong); !ok {
			t.Fatalf("pair %d: reply %T, want *messages.BenchPong", i, res)
		}
	}
}

// The baseline measures every remote scenario and its counts verify.
func TestProtoactorRemoteBaselineMeasures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := QuickConfig()
	cfg.Count, cfg.WarmupCount = 300, 30
	cfg.Payloads = []int{16, 1 << 10}
	cfg.Window = 256 // the flood under the asks of remote-ask-under-flood
	for _, name := range scenarioNamesWithBaseline(ImplProtoactorRemote) {
		for _, p := range Variants(cfg, name) {
			f, err := MeasureOne(ctx, cfg, name, ImplProtoactorRemote, p)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, p, err)
			}
			if !f.Verified.OK {
				t.Fatalf("%s %+v: verification %+v", name, p, f.Verified)
			}
		}
	}
}

// scenarioNamesWithBaseline lists the scenarios that have baseline impl.
func scenarioNamesWithBaseline(impl string) []string {
	var names []string
	for _, s := range registry() {
		for _, b := range s.baselines {
			if b.name == impl {
				names = append(names, s.name)
			}
		}
	}
	return names
}

// In a TLS run the remotes of the remote scenarios serve gRPC over TLS with
// the run's certificate, and an ask between them is answered.
func TestProtoactorRemoteBaselineOverTLS(t *testing.T) {
	h := tlsHarness(t, ScenarioRemoteAsk)
	pair, target, err := newRemoteActor(h, 16, protoactor.PropsFromFunc(func(c protoactor.Context) {
		if _, ok := c.Message().(*messages.BenchPing); ok {
			c.Respond(&messages.BenchPong{})
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer pair.close()
	res, err := pair.a.Root.RequestFuture(target, &messages.BenchPing{}, askTimeoutBaseline).Result()
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	if _, ok := res.(*messages.BenchPong); !ok {
		t.Fatalf("reply %T, want *messages.BenchPong", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := h.tls.client.Clone()
	cfg.NextProtos = []string{"h2"}
	if err := tlsHandshakeWith(ctx, pair.b.Address(), cfg); err != nil {
		t.Fatalf("TLS handshake with the remote's gRPC server: %v", err)
	}
}
