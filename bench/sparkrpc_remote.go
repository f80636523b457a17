package bench

import (
	"context"
	"fmt"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The sparkrpc side of the remote scenarios: two networked envs in this
// process, listening on 127.0.0.1 port 0; the endpoint is registered on the
// second and reached from the first through a Ref.

// newEnvPair starts two networked envs.
func newEnvPair(h *harness) (client, server *actor.Env, closeFn func(), err error) {
	server, err = newNetworkedEnv(h, "bench-server")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start env: %w", err)
	}
	client, err = newNetworkedEnv(h, "bench-client")
	if err != nil {
		shutdownEnv(server)
		return nil, nil, nil, fmt.Errorf("start env: %w", err)
	}
	return client, server, func() {
		shutdownEnv(client)
		shutdownEnv(server)
	}, nil
}

// sparkrpcRemoteOneway sends the one-way workload of p from one env to an
// endpoint of another.
func sparkrpcRemoteOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	client, server, closeFn, err := newEnvPair(h)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	sk := &sink{}
	if _, err := server.RegisterEndpoint("bench", &sinkEndpoint{sk: sk}); err != nil {
		return nil, err
	}
	ref, err := client.SetupEndpointRef(ctx, server.Address(), "bench")
	if err != nil {
		return nil, err
	}
	spec := onewaySpec{
		senders:   1,
		receivers: 1,
		route:     func(int) int { return 0 },
		window:    h.cfg.window(p.Payload),
		payload:   make([]byte, p.Payload),
		sink:      sk,
		send:      func(_ int, m *messages.BenchPing) error { return ref.Send(m) },
	}
	return h.measure(ctx, p.Payload, func(ctx context.Context, b budget) (sample, error) {
		return h.runOneway(ctx, spec, b)
	})
}

// sparkrpcRemoteAsk asks an endpoint of another env.
func sparkrpcRemoteAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	client, server, closeFn, err := newEnvPair(h)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	sk := &sink{}
	if _, err := server.RegisterEndpoint("bench", &replyEndpoint{sk: sk}); err != nil {
		return nil, err
	}
	ref, err := client.SetupEndpointRef(ctx, server.Address(), "bench")
	if err != nil {
		return nil, err
	}
	return h.measure(ctx, p.Payload, askRunner(h, p, sk, refAsker(ref)))
}
