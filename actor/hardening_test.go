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

// flooder keeps its own mailbox full: every message it handles sends the
// next one, so its mailbox is never empty while flooding is on.
type flooder struct {
	on      *atomic.Bool
	handled atomic.Int64
}

func (f *flooder) Receive(ctx *actor.Context, msg proto.Message) error {
	f.handled.Add(1)
	if f.on.Load() {
		return ctx.Self().Send(msg)
	}
	return nil
}

// The shared loop is fair: on a loop of N workers, N endpoints whose
// mailboxes never empty do not keep an idle endpoint from answering.
func TestSharedLoopIsFair(t *testing.T) {
	const workers = 2
	e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, fmt.Sprint(workers)))
	var on atomic.Bool
	on.Store(true)
	floods := make([]*flooder, workers)
	for i := range floods {
		floods[i] = &flooder{on: &on}
		ref := register(t, e, fmt.Sprintf("flood-%d", i), floods[i])
		for range 2 {
			if err := ref.Send(str("flood")); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer on.Store(false) // before the env's shutdown
	// Both workers are now busy with the floods.
	eventually(t, func() bool { return floods[0].handled.Load() > 1000 && floods[1].handled.Load() > 1000 }, "floods running")
	idle := register(t, e, "idle", &testEndpoint{})
	for i := range 3 {
		// Bounded by a deadline, not timed: it must answer at all.
		if got := askString(t, idle, fmt.Sprint("ping-", i)); got != fmt.Sprint("ping-", i) {
			t.Fatalf("idle endpoint answered %q", got)
		}
	}
}
