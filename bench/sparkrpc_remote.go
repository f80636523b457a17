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

// newRemoteEndpoint starts two networked envs, registers ep as "bench" on the
// second and returns a reference to it from the first.
func newRemoteEndpoint(ctx context.Context, h *harness, ep actor.Endpoint) (*actor.Ref, func(), error) {
	client, server, closeFn, err := newEnvPair(h)
	if err != nil {
		return nil, nil, err
	}
	if _, err := server.RegisterEndpoint("bench", ep); err != nil {
		closeFn()
		return nil, nil, err
	}
	ref, err := client.SetupEndpointRef(ctx, server.Address(), "bench")
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return ref, closeFn, nil
}

// sparkrpcRemoteOneway sends the one-way workload of p from one env to an
// endpoint of another.
func sparkrpcRemoteOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	ref, closeFn, err := newRemoteEndpoint(ctx, h, &sinkEndpoint{sk: sk})
	if err != nil {
		return nil, err
	}
	defer closeFn()
	send := func(_ int, m *messages.BenchPing) error { return ref.Send(m) }
	f, err := h.measure(ctx, p.Payload, onewayRunner(h, p, sk, 1, 1, send, nil))
	if f != nil {
		if f.Extra == nil {
			f.Extra = map[string]float64{}
		}
		// The harness builds one message per send (newPing, its payload
		// shared): the rest is the transport's and the receiver's.
		f.Extra[metricTransportAllocs] = f.AllocsPerMsg - 1
	}
	return f, err
}

// metricTransportAllocs is the Extra figure of remote-send that counts the
// allocations a message costs past the one the harness makes to send it:
// the message the receiving endpoint owns, and what is amortised.
const metricTransportAllocs = "transport_allocs_per_msg"

// sparkrpcRemoteOnewayBorrowed is sparkrpcRemoteOneway to an endpoint that
// borrows its messages: a large one aliases the receiver's read buffer.
func sparkrpcRemoteOnewayBorrowed(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	ref, closeFn, err := newRemoteEndpoint(ctx, h, &borrowingSinkEndpoint{sinkEndpoint{sk: sk}})
	if err != nil {
		return nil, err
	}
	defer closeFn()
	send := func(_ int, m *messages.BenchPing) error { return ref.Send(m) }
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, 1, 1, send, nil))
}

// borrowingSinkEndpoint is a sinkEndpoint that borrows its messages: it
// keeps nothing of a message past its handler, so it needs no Retain.
type borrowingSinkEndpoint struct{ sinkEndpoint }

// BorrowsMessages implements actor.Borrower.
func (*borrowingSinkEndpoint) BorrowsMessages() bool { return true }

// sparkrpcRemoteAsk asks an endpoint of another env.
func sparkrpcRemoteAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	ref, closeFn, err := newRemoteEndpoint(ctx, h, &replyEndpoint{sk: sk})
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return h.measure(ctx, p.Payload, askRunner(h, p, sk, refAsker(ref)))
}
