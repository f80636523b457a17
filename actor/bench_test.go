package actor_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The endpoint layer next to raw protoactor on the same machine, so that its
// overhead is visible: compare the ns/op of each sparkrpc sub-benchmark with
// its protoactor sibling.
//
//	go test -run XXX -bench . -benchmem ./actor/

// benchCounter counts one-way messages and closes done at target.
type benchCounter struct {
	n, target int
	done      chan struct{}
}

func (c *benchCounter) Receive(*actor.Context, proto.Message) error {
	c.n++
	if c.n == c.target {
		close(c.done)
	}
	return nil
}

func (c *benchCounter) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(msg)
	return nil
}

func benchEnv(b *testing.B) *actor.Env {
	b.Helper()
	e, err := actor.NewEnv("bench", nil, actor.WithLogger(zerolog.Nop()))
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func stopBenchEnv(b *testing.B, e *actor.Env) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
}

// rawSystem is a protoactor actor system that logs nothing.
func rawSystem() *protoactor.ActorSystem {
	return protoactor.NewActorSystem(protoactor.WithLoggerFactory(func(*protoactor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

// waitBench waits for done, bounded so that a lost message fails the
// benchmark instead of hanging it.
func waitBench(b *testing.B, done <-chan struct{}) {
	b.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatal("the receiver did not count every message")
	}
}

// BenchmarkSend measures one-way throughput to one endpoint: b.N sends,
// timed until the receiver has counted all of them.
func BenchmarkSend(b *testing.B) {
	msg := wrapperspb.String("0123456789abcdef")
	b.Run("sparkrpc", func(b *testing.B) {
		e := benchEnv(b)
		defer stopBenchEnv(b, e)
		c := &benchCounter{target: b.N, done: make(chan struct{})}
		ref, err := e.RegisterEndpoint("counter", c)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := ref.Send(msg); err != nil {
				b.Fatal(err)
			}
		}
		waitBench(b, c.done)
	})
	b.Run("protoactor", func(b *testing.B) {
		system := rawSystem()
		defer system.Shutdown()
		n, target, done := 0, b.N, make(chan struct{})
		pid := system.Root.Spawn(protoactor.PropsFromFunc(func(ctx protoactor.Context) {
			if _, ok := ctx.Message().(*wrapperspb.StringValue); ok {
				n++
				if n == target {
					close(done)
				}
			}
		}))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			system.Root.Send(pid, msg)
		}
		waitBench(b, done)
	})
}

// BenchmarkAsk measures sequential request/reply latency: one ask in
// flight at a time.
func BenchmarkAsk(b *testing.B) {
	msg := wrapperspb.String("0123456789abcdef")
	b.Run("sparkrpc", func(b *testing.B) {
		e := benchEnv(b)
		defer stopBenchEnv(b, e)
		ref, err := e.RegisterEndpoint("echo", &benchCounter{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := ref.AskSync(ctx, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sparkrpc-cancellable-ctx", func(b *testing.B) {
		// The same with a context that can end: the ask also watches it.
		e := benchEnv(b)
		defer stopBenchEnv(b, e)
		ref, err := e.RegisterEndpoint("echo", &benchCounter{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := ref.AskSync(ctx, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protoactor-future-to-endpoint", func(b *testing.B) {
		// protoactor's own RequestFuture to a sparkrpc endpoint's PID.
		e := benchEnv(b)
		defer stopBenchEnv(b, e)
		ref, err := e.RegisterEndpoint("echo", &benchCounter{})
		if err != nil {
			b.Fatal(err)
		}
		root := e.System().Root
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := root.RequestFuture(ref.PID(), msg, time.Minute).Result(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protoactor", func(b *testing.B) {
		system := rawSystem()
		defer system.Shutdown()
		pid := system.Root.Spawn(protoactor.PropsFromFunc(func(ctx protoactor.Context) {
			if m, ok := ctx.Message().(*wrapperspb.StringValue); ok {
				ctx.Respond(m)
			}
		}))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := system.Root.RequestFuture(pid, msg, time.Minute).Result(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
