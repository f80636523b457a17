package actor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
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
	ctx := testutil.Context(t, testTimeout)
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
					_ = ref.AskWithTimeout(ctx, str("ask"), actor.InfiniteTimeout())
				}
			}
		})
		// Remote: frames for that name, delivered by the transport.
		wg.Go(func() {
			for !done.Load() {
				i := cur.Load()
				_ = client.RemoteRef(server.Address(), names[i]).Send(str("remote"))
				actor.HostOf(server).Deliver(protoactor.NewPID(server.Identity(), names[i]), actor.Inbound{Msg: str("frame")})
			}
		})
	}
	// Connection events to every endpoint.
	wg.Go(func() {
		for i := 0; !done.Load(); i++ {
			actor.HostOf(server).Connected(actor.Peer{Identity: fmt.Sprintf("peer-%d:1", i), Address: actor.NewRpcAddress("peer", i)})
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

// selfFinder looks its own name up in OnStart, as a peer that answers
// OnStart's first message by name does.
type selfFinder struct {
	env   *actor.Env
	name  string
	found chan bool
}

func (s *selfFinder) OnStart(*actor.Context) error {
	_, ok := s.env.Endpoint(s.name)
	s.found <- ok
	return nil
}

func (s *selfFinder) Receive(*actor.Context, proto.Message) error { return nil }

type isolatedSelfFinder struct{ selfFinder }

func (*isolatedSelfFinder) ThreadCount() int { return 1 }

// OnStart runs only once the endpoint can be found by name. An executor
// registers with its driver in OnStart and the driver answers with tasks
// at once: before, the endpoint's loop could run OnStart while
// RegisterEndpoint had yet to publish the name, and the driver's LaunchTask
// was dropped as sent to an unknown endpoint (a job then hung).
func TestOnStartRunsOnceTheNameIsFound(t *testing.T) {
	for _, isolated := range []bool{false, true} {
		t.Run(fmt.Sprintf("isolated=%v", isolated), func(t *testing.T) {
			e := newEnv(t, actor.NewConf())
			const n = 500
			for i := range n {
				name := fmt.Sprintf("finder-%d", i)
				sf := selfFinder{env: e, name: name, found: make(chan bool, 1)}
				var ep actor.Endpoint = &sf
				if isolated {
					iso := &isolatedSelfFinder{sf}
					ep, sf.found = iso, iso.found
				}
				ref, err := e.RegisterEndpoint(name, ep)
				if err != nil {
					t.Fatal(err)
				}
				if !<-sf.found {
					t.Fatalf("registration %d: OnStart ran before %q could be found", i, name)
				}
				if err := e.Stop(ref); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
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
	testutil.Eventually(t, testTimeout, "floods running", func() bool { return floods[0].handled.Load() > 1000 && floods[1].handled.Load() > 1000 })
	idle := register(t, e, "idle", &testEndpoint{})
	for i := range 3 {
		// Bounded by a deadline, not timed: it must answer at all.
		if got := askString(t, idle, fmt.Sprint("ping-", i)); got != fmt.Sprint("ping-", i) {
			t.Fatalf("idle endpoint answered %q", got)
		}
	}
}

// blocker is an endpoint whose handler blocks until release is closed.
type blocker struct {
	testEndpoint
	entered chan struct{} // one value per handler that started
	release chan struct{}
}

func newBlocker() *blocker {
	b := &blocker{entered: make(chan struct{}, 16), release: make(chan struct{})}
	b.ask = func(ctx *actor.CallContext, msg proto.Message) error {
		b.entered <- struct{}{}
		<-b.release
		ctx.Reply(msg)
		return nil
	}
	return b
}

// waitDone waits for f within testTimeout and returns its error.
func waitDone(t *testing.T, f *actor.Future, what string) error {
	t.Helper()
	testutil.Recv(t, f.Done(), testTimeout, what)
	_, err := f.Result()
	return err
}

// Shutdown fails every pending ask at once with ErrEnvStopped (also one
// with an infinite timeout, also one to a remote endpoint), even while a
// handler blocks; a ctx that ends first makes it return an error naming
// the blocked endpoint.
func TestShutdownFailsPendingAsksAtOnce(t *testing.T) {
	nw := actor.NewMemNetwork()
	server := serverEnv(t, nw, "host1", 1)
	silent := &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }} // never answers
	register(t, server, "silent", silent)

	e := newEnv(t, nil, actor.WithTransport(nw.Transport("host2", 2)))
	b := newBlocker()
	release := sync.OnceFunc(func() { close(b.release) })
	defer release()
	ref := register(t, e, "blocker", b)
	running := ref.AskWithTimeout(context.Background(), str("first"), actor.InfiniteTimeout())
	testutil.Recv(t, b.entered, testTimeout, "the handler to start")
	queued := ref.AskWithTimeout(context.Background(), str("second"), actor.InfiniteTimeout())
	timed := ref.Ask(context.Background(), str("third"))
	remote := setupRef(t, e, server, "silent").AskWithTimeout(context.Background(), str("remote"), actor.InfiniteTimeout())
	silent.waitFor(t, "ask:remote")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := e.Shutdown(ctx)
	var se *actor.ShutdownError
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) || !slices.Equal(se.Running, []string{"blocker"}) ||
		!strings.Contains(err.Error(), "blocker") {
		t.Errorf("Shutdown with a blocked handler and an expiring ctx = %v, want a *ShutdownError naming blocker", err)
	}
	// The handler is still blocked: the asks must have failed without it.
	for name, f := range map[string]*actor.Future{"running": running, "queued": queued, "timed": timed, "remote": remote} {
		if err := waitDone(t, f, name+" ask to fail"); !errors.Is(err, actor.ErrEnvStopped) {
			t.Errorf("%s ask pending at Shutdown = %v, want ErrEnvStopped", name, err)
		}
	}
	select {
	case <-e.Terminated():
		t.Fatal("env terminated while a handler still runs")
	default:
	}
	release() // the queued asks are still handled (their askers have gone), then OnStop
	if err := e.AwaitTermination(testutil.Context(t, testTimeout)); err != nil {
		t.Fatalf("AwaitTermination: %v", err)
	}
	if got := b.Events(); got[len(got)-1] != "stop" {
		t.Errorf("events %q, want OnStop last", got)
	}
}

// Close returns at once, even with a blocked handler: pending asks fail
// with ErrEnvStopped, queued messages are dropped and counted, and the
// endpoint gets OnStop when its handler returns.
func TestCloseIsImmediate(t *testing.T) {
	e := newEnv(t, nil)
	b := newBlocker()
	ref := register(t, e, "blocker", b)
	running := ref.AskWithTimeout(context.Background(), str("first"), actor.InfiniteTimeout())
	testutil.Recv(t, b.entered, testTimeout, "the handler to start")
	for i := range 10 {
		if err := ref.Send(str(fmt.Sprint("queued-", i))); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	if err := testutil.Recv(t, closed, testTimeout, "Close to return"); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := waitDone(t, running, "the running ask to fail"); !errors.Is(err, actor.ErrEnvStopped) {
		t.Errorf("ask pending at Close = %v, want ErrEnvStopped", err)
	}
	if err := ref.Send(str("late")); !errors.Is(err, actor.ErrEnvStopped) {
		t.Errorf("Send after Close = %v, want ErrEnvStopped", err)
	}
	close(b.release)
	testutil.Recv(t, e.Terminated(), testTimeout, "termination once the handler returned")
	if got, want := b.Events(), []string{"start", "ask:first", "stop"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q (queued messages dropped)", got, want)
	}
	if e.Dropped() != 10 {
		t.Errorf("Dropped() = %d, want the 10 queued messages", e.Dropped())
	}
}

// A plain protoactor RequestFuture to an endpoint that does not exist
// fails with protoactor's ErrDeadLetter, whether the PID is local or on
// another env; a failure the endpoint sends arrives as an RpcFailure.
func TestProtoactorRequestToMissingEndpoint(t *testing.T) {
	nw := actor.NewMemNetwork()
	server := serverEnv(t, nw, "host1", 1)
	client := clientEnv(t, nw)
	setupRef(t, client, server, actor.VerifierName) // open the link
	for _, pid := range []*protoactor.PID{
		protoactor.NewPID(client.Identity(), "missing"),
		protoactor.NewPID(server.Identity(), "missing"),
	} {
		res, err := client.System().Root.RequestFuture(pid, str("hi"), testTimeout).Result()
		if !errors.Is(err, protoactor.ErrDeadLetter) {
			t.Errorf("RequestFuture to missing %s = %v, %v; want ErrDeadLetter", pid, res, err)
		}
	}
	register(t, server, "failing", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return errors.New("Oops") }})
	res, err := client.System().Root.RequestFuture(protoactor.NewPID(server.Identity(), "failing"), str("hi"), testTimeout).Result()
	if f, ok := res.(*messages.RpcFailure); err != nil || !ok || f.GetMessage() != "Oops" {
		t.Errorf("RequestFuture to a failing endpoint = %v, %v; want an RpcFailure \"Oops\"", res, err)
	}
}
