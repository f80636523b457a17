package bench

import (
	"context"
	"fmt"
	"sync"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The remote fan-in scenario: what a Spark driver meets when its executors
// report task status. FanInExecutors envs (one sender each, over a
// connection of its own) send one-way messages to one endpoint of a driver
// env; the endpoint checks every message (exactly once, in each sender's
// order). Baselines: protoactor's gRPC remote with one actor system per
// sender, and raw TCP with one connection per sender (the ceiling: its
// receiving side is one goroutine per connection, no single endpoint).

// FanInExecutors is the number of sending envs of the remote-fan-in
// scenario.
const FanInExecutors = 32

// sparkrpcRemoteFanIn sends from p.Senders networked envs to one endpoint.
func sparkrpcRemoteFanIn(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	driver, err := newNetworkedEnv(h, "bench-driver")
	if err != nil {
		return nil, fmt.Errorf("start env: %w", err)
	}
	envs := []*actor.Env{driver}
	defer func() {
		for _, env := range envs {
			shutdownEnv(env)
		}
	}()
	if _, err := driver.RegisterEndpoint("driver", &sinkEndpoint{sk: sk}); err != nil {
		return nil, err
	}
	refs := make([]*actor.Ref, p.Senders)
	for s := range refs {
		env, err := newNetworkedEnv(h, fmt.Sprintf("bench-executor-%d", s))
		if err != nil {
			return nil, fmt.Errorf("start env: %w", err)
		}
		envs = append(envs, env)
		if refs[s], err = env.SetupEndpointRef(ctx, driver.Address(), "driver"); err != nil {
			return nil, err
		}
	}
	send := func(s int, m *messages.BenchPing) error { return refs[s].Send(m) }
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, p.Senders, 1, send, nil))
}

// protoactorRemoteFanIn sends from p.Senders actor systems, each with its
// remote, to one actor of another.
func protoactorRemoteFanIn(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	driver, rd, err := newRemoteSystem(h, p.Payload)
	if err != nil {
		return nil, err
	}
	systems := []*protoactor.ActorSystem{driver}
	remotes := []*remote.Remote{rd}
	defer func() {
		// In sequence, the driver first: see remotePair.close.
		for _, r := range remotes {
			shutdownRemote(r)
		}
		for _, sys := range systems {
			sys.Shutdown()
		}
	}()
	props := protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*messages.BenchPing); ok {
			sk.arrive(0, m)
		}
	})
	if _, err := driver.Root.SpawnNamed(props, "driver"); err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	target := protoactor.NewPID(driver.Address(), "driver")
	senders := make([]*protoactor.ActorSystem, p.Senders)
	for s := range senders {
		sys, r, err := newRemoteSystem(h, p.Payload)
		if err != nil {
			return nil, err
		}
		systems, remotes = append(systems, sys), append(remotes, r)
		senders[s] = sys
	}
	send := func(s int, m *messages.BenchPing) error {
		senders[s].Root.Send(target, m)
		return nil
	}
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, p.Senders, 1, send, nil))
}

// tcpFanIn streams from p.Senders connections to one listener, each
// connection read by a goroutine of its own.
func tcpFanIn(ctx context.Context, h *harness, p Params) (*Figures, error) {
	conns, err := newTCPConns(ctx, h.connTLS, p.Senders)
	if err != nil {
		return nil, err
	}
	sk := &sink{}
	var wg sync.WaitGroup
	defer func() {
		conns.close()
		wg.Wait()
	}()
	writers := make([]*frameWriter, p.Senders)
	for s := range writers {
		writers[s] = newFrameWriter(conns.clients[s])
		wg.Add(1)
		go func() {
			defer wg.Done()
			readArrivals(conns.servers[s], sk, s)
		}()
	}
	send := func(s int, m *messages.BenchPing) error { return writers[s].writePing(m) }
	flush := func(s int) error { return writers[s].w.Flush() }
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, p.Senders, p.Senders, send, flush))
}
