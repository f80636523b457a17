package actor_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// startFirst records whether anything reached the endpoint before OnStart.
type startFirst struct {
	started atomic.Bool
	early   atomic.Int64
	got     atomic.Int64
}

func (s *startFirst) OnStart(*actor.Context) error { s.started.Store(true); return nil }

func (s *startFirst) note() {
	if !s.started.Load() {
		s.early.Add(1)
	}
	s.got.Add(1)
}

func (s *startFirst) Receive(*actor.Context, proto.Message) error { s.note(); return nil }

func (s *startFirst) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	s.note()
	ctx.Reply(msg)
	return nil
}

func (s *startFirst) OnConnected(*actor.Context, actor.RpcAddress) error { s.note(); return nil }

// An endpoint is reachable only once it can take messages: thousands of
// registrations race local sends and asks, remote deliveries (the
// transport's Deliver path) and connection events posted to every endpoint.
// None may crash the process or reach an endpoint before its OnStart.
func TestRegistrationRacesMessages(t *testing.T) {
	const n = 2000
	nw := actor.NewMemNetwork()
	server := serverEnv(t, nw, "host1", 1)
	client := clientEnv(t, nw)
	setupRef(t, client, server, actor.VerifierName) // open the link

	names := make([]string, n)
	eps := make([]*startFirst, n)
	for i := range n {
		names[i] = fmt.Sprintf("racer-%d", i)
		eps[i] = &startFirst{}
	}
	var done atomic.Bool
	var cur atomic.Int64 // the name being registered now
	var sent [n]atomic.Int64
	var wg sync.WaitGroup
	ctx := testContext(t)
	for range 2 {
		// Local: send to and ask the name being registered as soon as
		// Endpoint finds it; a Send that succeeds must be handled.
		wg.Go(func() {
			for !done.Load() {
				i := cur.Load()
				if ref, ok := server.Endpoint(names[i]); ok {
					if ref.Send(str("local")) == nil {
						sent[i].Add(1)
					}
					_ = ref.AskWithTimeout(ctx, str("ask"), actor.InfiniteTimeout)
				}
			}
		})
		// Remote: frames for that name, delivered by the transport.
		wg.Go(func() {
			for !done.Load() {
				i := cur.Load()
				_ = client.RemoteRef(server.Address(), names[i]).Send(str("remote"))
				server.Deliver(protoactor.NewPID(server.Identity(), names[i]), nil, str("frame"))
			}
		})
	}
	// Connection events to every endpoint.
	wg.Go(func() {
		for i := 0; !done.Load(); i++ {
			server.Connected(actor.Peer{Identity: fmt.Sprintf("peer-%d:1", i), Address: actor.NewRpcAddress("peer", i)})
		}
	})
	for i := range n {
		cur.Store(int64(i))
		if _, err := server.RegisterEndpoint(names[i], eps[i]); err != nil {
			t.Fatalf("RegisterEndpoint: %v", err)
		}
	}
	done.Store(true)
	wg.Wait()
	shutdown(t, server) // handles what is queued, then OnStop
	reached := 0
	for i, ep := range eps {
		if ep.early.Load() != 0 {
			t.Errorf("%s got %d messages before OnStart", names[i], ep.early.Load())
		}
		if ep.got.Load() < sent[i].Load() {
			t.Errorf("%s handled %d messages; %d local sends to it succeeded", names[i], ep.got.Load(), sent[i].Load())
		}
		if ep.got.Load() > 0 {
			reached++
		}
	}
	t.Logf("%d of %d endpoints got messages during the race", reached, n)
}
