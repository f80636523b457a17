package bench

import (
	"context"
	"fmt"
	"sync"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The protoactor-go gRPC remote baseline: two actor systems in this process,
// each with its remote listening on 127.0.0.1 port 0 (remote.Start listens
// on Host:Port and advertises the listener's address, so port 0 works). The
// receiving actor is spawned on the second system and addressed from the
// first by PID; asks use RequestFuture, whose reply needs the second system
// to connect back to the first.
//
// With Config.TLS, the remotes of the remote scenarios use gRPC's TLS
// credentials with the run's certificate, mutual as sparkrpc's.
//
// Configuration (see docs/design.md §7 for the defects of this remote): a batch of
// the endpoint writer must stay under gRPC's message size limit, so the batch
// is capped at about 4 MiB of payload and the limit is raised to 16 MiB; the
// messages are plain protobuf messages found in the global registry, so no
// kinds need to be registered.

// remoteGRPCMax is the gRPC message size limit of the baseline.
const remoteGRPCMax = 16 << 20

// remotePair is two actor systems connected by protoactor's remote.
type remotePair struct {
	a, b   *protoactor.ActorSystem
	ra, rb *remote.Remote
}

// startRemoteMu serialises remote.Start, which sets gRPC's global logger.
var startRemoteMu sync.Mutex

func newRemotePair(h *harness, payload int) (*remotePair, error) {
	a, ra, err := newRemoteSystem(h, payload)
	if err != nil {
		return nil, err
	}
	b, rb, err := newRemoteSystem(h, payload)
	if err != nil {
		shutdownRemote(ra)
		a.Shutdown()
		return nil, err
	}
	return &remotePair{a: a, b: b, ra: ra, rb: rb}, nil
}

// newRemoteSystem starts an actor system with its remote, configured for
// messages of payload bytes.
func newRemoteSystem(h *harness, payload int) (*protoactor.ActorSystem, *remote.Remote, error) {
	batch := max(1, min(1000, (4<<20)/(payload+64)))
	var serverCreds grpc.ServerOption = grpc.EmptyServerOption{}
	creds := grpc.WithTransportCredentials(insecure.NewCredentials())
	if h.connTLS != nil {
		creds, serverCreds = h.connTLS.grpcOptions()
	}
	conf := remote.Configure("127.0.0.1", 0,
		remote.WithEndpointWriterBatchSize(batch),
		remote.WithDialOptions(
			creds,
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(remoteGRPCMax), grpc.MaxCallRecvMsgSize(remoteGRPCMax)),
		),
		remote.WithServerOptions(serverCreds, grpc.MaxRecvMsgSize(remoteGRPCMax), grpc.MaxSendMsgSize(remoteGRPCMax)),
	)
	sys := newActorSystem(h.log)
	r := remote.NewRemote(sys, conf)
	if err := startRemote(r); err != nil {
		sys.Shutdown()
		return nil, nil, err
	}
	return sys, r, nil
}

// startRemote starts r; remote.Start panics when it cannot listen.
func startRemote(r *remote.Remote) (err error) {
	startRemoteMu.Lock()
	defer startRemoteMu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("protoactor remote: %v", v)
		}
	}()
	r.Start()
	return nil
}

// close shuts the remotes down one after the other, then both systems.
//
// Never both at once: a remote's graceful shutdown signals each of its
// endpoint readers through a channel that the reader closes when its stream
// ends, so a stream that the other remote's shutdown ends at the same moment
// made protoactor panic with "send on closed channel". In sequence, the
// first remote's shutdown ends the second's incoming streams (its writers
// stop) and asks the second's writers to disconnect, so its own graceful stop
// does not wait for them; by the time the second remote stops, its readers
// have long ended. The window where a reader has closed its channel but not
// yet left the map is not fully closed by protoactor, so a panic there is
// recovered and that remote is stopped at once instead (shutdownRemote).
func (p *remotePair) close() {
	shutdownRemote(p.ra)
	shutdownRemote(p.rb)
	p.a.Shutdown()
	p.b.Shutdown()
}

// shutdownRemote stops r gracefully, or at once when the graceful stop
// panics on a reader that ended during it (see remotePair.close).
func shutdownRemote(r *remote.Remote) {
	defer func() {
		if v := recover(); v != nil {
			r.Shutdown(false)
		}
	}()
	r.Shutdown(true)
}

// newRemoteActor starts a remote pair, spawns an actor with props as "bench"
// on its second system and returns the pair and the actor's PID as the
// first system addresses it.
func newRemoteActor(h *harness, payload int, props *protoactor.Props) (*remotePair, *protoactor.PID, error) {
	pair, err := newRemotePair(h, payload)
	if err != nil {
		return nil, nil, err
	}
	if _, err := pair.b.Root.SpawnNamed(props, "bench"); err != nil {
		pair.close()
		return nil, nil, fmt.Errorf("spawn: %w", err)
	}
	return pair, protoactor.NewPID(pair.b.Address(), "bench"), nil
}

// protoactorRemoteOneway sends the one-way workload of p over the remote.
func protoactorRemoteOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	pair, target, err := newRemoteActor(h, p.Payload, protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*messages.BenchPing); ok {
			sk.arrive(0, m)
		}
	}))
	if err != nil {
		return nil, err
	}
	defer pair.close()
	send := func(_ int, m *messages.BenchPing) error {
		pair.a.Root.Send(target, m)
		return nil
	}
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, 1, 1, send, nil))
}

// protoactorRemoteAsk asks over the remote with RequestFuture.
func protoactorRemoteAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	sk := &sink{}
	pair, target, err := newRemoteActor(h, p.Payload, protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*messages.BenchPing); ok {
			c.Respond(sk.reply(m))
		}
	}))
	if err != nil {
		return nil, err
	}
	defer pair.close()
	return h.measure(ctx, p.Payload, askRunner(h, p, sk, protoactorAsker(pair.a, target)))
}
