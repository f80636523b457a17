package bench

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The raw protoactor-go baselines: the same workloads with actors spawned
// directly on an actor system, Send for one-way messages and RequestFuture
// for asks.

// askTimeoutBaseline bounds every baseline ask; the stall timeout of a run is
// the effective limit.
const askTimeoutBaseline = 60 * time.Second

// newActorSystem starts an actor system whose own logging goes to log.
func newActorSystem(log zerolog.Logger) *protoactor.ActorSystem {
	plog := log.With().Str("component", "protoactor").Logger()
	return protoactor.NewActorSystem(
		protoactor.WithLoggerFactory(func(*protoactor.ActorSystem) *slog.Logger {
			return slog.New(zerolog.NewSlogHandler(plog))
		}),
		protoactor.WithDeadLetterRequestLogging(false),
		// A dead letter starts a goroutine that lives for this interval
		// (1 s by default); keep it short so that a system stopped at the
		// end of a run leaves nothing running for long.
		protoactor.WithDeadLetterThrottleInterval(50*time.Millisecond),
	)
}

// stopActors stops pids and waits (bounded) for them to stop.
func stopActors(sys *protoactor.ActorSystem, pids []*protoactor.PID) {
	futures := make([]*protoactor.Future, 0, len(pids))
	for _, pid := range pids {
		futures = append(futures, sys.Root.StopFuture(pid))
	}
	for _, f := range futures {
		_ = f.Wait() // a stop future times out after 10 s at worst
	}
}

// protoactorOneway runs the one-way workload of p (Senders senders spread
// over Endpoints actors) with raw protoactor Send.
func protoactorOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sys := newActorSystem(h.log)
	defer sys.Shutdown()
	sk := &sink{}
	receivers := max(1, p.Endpoints)
	pids := make([]*protoactor.PID, receivers)
	for r := range pids {
		props := protoactor.PropsFromFunc(func(c protoactor.Context) {
			if m, ok := c.Message().(*messages.BenchPing); ok {
				sk.arrive(r, m)
			}
		})
		pid, err := sys.Root.SpawnNamed(props, fmt.Sprintf("bench-%d", r))
		if err != nil {
			return nil, fmt.Errorf("spawn: %w", err)
		}
		pids[r] = pid
	}
	defer stopActors(sys, pids)
	send := func(s int, m *messages.BenchPing) error {
		sys.Root.Send(pids[s%receivers], m)
		return nil
	}
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, max(1, p.Senders), receivers, send, nil))
}

// protoactorAsk runs the asking workload of p with raw protoactor
// RequestFuture to one actor that responds.
func protoactorAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sys := newActorSystem(h.log)
	defer sys.Shutdown()
	sk := &sink{}
	props := protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*messages.BenchPing); ok {
			c.Respond(sk.reply(m))
		}
	})
	pid, err := sys.Root.SpawnNamed(props, "bench")
	if err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	defer stopActors(sys, []*protoactor.PID{pid})
	return h.measure(ctx, p.Payload, askRunner(h, p, sk, protoactorAsker(sys, pid)))
}

// protoactorAsker asks pid on sys with RequestFuture.
func protoactorAsker(sys *protoactor.ActorSystem, pid *protoactor.PID) func(context.Context, int, *messages.BenchPing) (*messages.BenchPong, error) {
	return func(_ context.Context, _ int, m *messages.BenchPing) (*messages.BenchPong, error) {
		res, err := sys.Root.RequestFuture(pid, m, askTimeoutBaseline).Result()
		if err != nil {
			return nil, err
		}
		pong, ok := res.(*messages.BenchPong)
		if !ok {
			return nil, fmt.Errorf("unexpected reply %T", res)
		}
		return pong, nil
	}
}

// protoactorPingPong runs the many-endpoints workload with raw protoactor
// actors.
func protoactorPingPong(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sys := newActorSystem(h.log)
	defer sys.Shutdown()
	sk := &sink{}
	spec := &pingPongSpec{pairs: p.Endpoints / 2, payload: make([]byte, p.Payload), sink: sk}
	pids := make([]*protoactor.PID, 2*spec.pairs)
	spec.send = func(_, to int, m *messages.BenchPing) error {
		sys.Root.Send(pids[to], m)
		return nil
	}
	for i := range pids {
		props := protoactor.PropsFromFunc(func(c protoactor.Context) {
			if m, ok := c.Message().(*messages.BenchPing); ok {
				sk.pingPong(spec, i, m)
			}
		})
		pid, err := sys.Root.SpawnNamed(props, fmt.Sprintf("bench-%d", i))
		if err != nil {
			return nil, fmt.Errorf("spawn: %w", err)
		}
		pids[i] = pid
	}
	defer stopActors(sys, pids)
	return h.measure(ctx, p.Payload, pingPongRunner(h, spec))
}
