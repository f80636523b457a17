package bench

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The sparkrpc side of the local scenarios: endpoints registered on one
// actor.Env, Ref.Send for one-way messages and Ref.Ask for asks.

// shutdownTimeout bounds the shutdown of the envs a measurement started.
const shutdownTimeout = 30 * time.Second

// sinkEndpoint receives one-way bench messages on the env's shared loop.
type sinkEndpoint struct {
	sk *sink
	r  int
}

// Receive checks and counts a one-way bench message.
func (e *sinkEndpoint) Receive(_ *actor.Context, msg proto.Message) error {
	m, ok := msg.(*messages.BenchPing)
	if !ok {
		return actor.ErrUnsupportedMessage
	}
	e.sk.arrive(e.r, m)
	return nil
}

// dedicatedSinkEndpoint is a sinkEndpoint with its own serial loop.
type dedicatedSinkEndpoint struct{ sinkEndpoint }

// ThreadCount asks for a dedicated serial loop.
func (*dedicatedSinkEndpoint) ThreadCount() int { return 1 }

// replyEndpoint answers asked bench messages.
type replyEndpoint struct{ sk *sink }

// Receive refuses one-way messages: this endpoint only answers asks.
func (*replyEndpoint) Receive(*actor.Context, proto.Message) error {
	return actor.ErrUnsupportedMessage
}

// ReceiveAndReply checks an asked bench message and answers it.
func (e *replyEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	m, ok := msg.(*messages.BenchPing)
	if !ok {
		return actor.ErrUnsupportedMessage
	}
	ctx.Reply(e.sk.reply(m))
	return nil
}

// pingPongEndpoint is one endpoint of the many-endpoints scenario.
type pingPongEndpoint struct {
	sk   *sink
	spec *pingPongSpec
	idx  int
}

// Receive plays one ping-pong move.
func (e *pingPongEndpoint) Receive(_ *actor.Context, msg proto.Message) error {
	m, ok := msg.(*messages.BenchPing)
	if !ok {
		return actor.ErrUnsupportedMessage
	}
	e.sk.pingPong(e.spec, e.idx, m)
	return nil
}

func newLocalEnv(h *harness) (*actor.Env, func(), error) {
	env, err := actor.NewEnv("bench", nil, append(h.metrics.envOptions(), actor.WithLogger(h.log))...)
	if err != nil {
		return nil, nil, err
	}
	h.metrics.track(env)
	return env, func() { shutdownEnv(env) }, nil
}

func shutdownEnv(env *actor.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = env.Shutdown(ctx) // the figures are taken; a slow shutdown only delays the next scenario
}

// sparkrpcOneway runs the one-way workload of p (Senders senders spread over
// Endpoints endpoints; Loop "dedicated" gives each endpoint its own loop).
func sparkrpcOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	env, done, err := newLocalEnv(h)
	if err != nil {
		return nil, err
	}
	defer done()
	sk := &sink{}
	receivers := max(1, p.Endpoints)
	refs := make([]*actor.Ref, receivers)
	for r := range refs {
		var ep actor.Endpoint = &sinkEndpoint{sk: sk, r: r}
		if p.Loop == "dedicated" {
			ep = &dedicatedSinkEndpoint{sinkEndpoint{sk: sk, r: r}}
		}
		if refs[r], err = env.RegisterEndpoint(fmt.Sprintf("bench-%d", r), ep); err != nil {
			return nil, err
		}
	}
	send := func(s int, m *messages.BenchPing) error { return refs[s%receivers].Send(m) }
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, max(1, p.Senders), receivers, send, nil))
}

// sparkrpcAsk runs the asking workload of p with Ref.Ask to one endpoint.
func sparkrpcAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	env, done, err := newLocalEnv(h)
	if err != nil {
		return nil, err
	}
	defer done()
	sk := &sink{}
	ref, err := env.RegisterEndpoint("bench", &replyEndpoint{sk: sk})
	if err != nil {
		return nil, err
	}
	return h.measure(ctx, p.Payload, askRunner(h, p, sk, refAsker(ref)))
}

// refAsker asks ref and waits for the reply.
func refAsker(ref *actor.Ref) func(context.Context, int, *messages.BenchPing) (*messages.BenchPong, error) {
	return func(ctx context.Context, _ int, m *messages.BenchPing) (*messages.BenchPong, error) {
		return actor.AskAs[*messages.BenchPong](ctx, ref, m)
	}
}

// sparkrpcPingPong runs the many-endpoints workload on one env.
func sparkrpcPingPong(ctx context.Context, h *harness, p Params) (*Figures, error) {
	env, done, err := newLocalEnv(h)
	if err != nil {
		return nil, err
	}
	defer done()
	sk := &sink{}
	spec := &pingPongSpec{pairs: p.Endpoints / 2, payload: make([]byte, p.Payload), sink: sk}
	refs := make([]*actor.Ref, 2*spec.pairs)
	spec.send = func(_, to int, m *messages.BenchPing) error { return refs[to].Send(m) }
	for i := range refs {
		if refs[i], err = env.RegisterEndpoint(fmt.Sprintf("bench-%d", i), &pingPongEndpoint{sk: sk, spec: spec, idx: i}); err != nil {
			return nil, err
		}
	}
	return h.measure(ctx, p.Payload, pingPongRunner(h, spec))
}
