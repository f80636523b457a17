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

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The local behaviour of Spark's RpcEnvSuite, one test per case.

func TestSendLocally(t *testing.T) {
	e := newEnv(t, nil)
	got := make(chan string, 1)
	ref := register(t, e, "send-locally", actor.ReceiveFunc(func(_ *actor.Context, msg proto.Message) error {
		got <- text(msg)
		return nil
	}))
	if err := ref.Send(str("hello")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if s := testutil.Recv(t, got, testTimeout, "the message"); s != "hello" {
		t.Fatalf("received %q, want %q", s, "hello")
	}
}

func TestSendRefInReply(t *testing.T) {
	e := newEnv(t, nil)
	// The endpoint answers "Hello" with a reference to itself and echoes
	// anything else.
	ref := register(t, e, "send-ref", &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		if text(msg) == "Hello" {
			ctx.Reply(ctx.Self().Proto())
		} else {
			ctx.Reply(msg)
		}
		return nil
	}})
	p, err := ref.AskSync(testutil.Context(t, testTimeout), str("Hello"))
	if err != nil {
		t.Fatalf("AskSync: %v", err)
	}
	pr, ok := p.(*messages.EndpointRef)
	if !ok {
		t.Fatalf("reply is a %T, want *messages.EndpointRef", p)
	}
	got, err := e.RefFromProto(pr)
	if err != nil {
		t.Fatalf("RefFromProto: %v", err)
	}
	if got.Name() != "send-ref" {
		t.Fatalf("ref name = %q, want send-ref", got.Name())
	}
	if s := askString(t, got, "Echo"); s != "Echo" {
		t.Fatalf("ask through the received ref = %q, want Echo", s)
	}
}

func TestAskLocally(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "ask-locally", &testEndpoint{})
	if s := askString(t, ref, "hello"); s != "hello" {
		t.Fatalf("reply = %q, want hello", s)
	}
}

func TestAskTimeout(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "ask-timeout", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error {
		return nil // never replies
	}})
	const key = "spark.rpc.short.timeout"
	_, err := ref.AskSyncWithTimeout(testutil.Context(t, testTimeout), str("hello"), actor.RpcTimeout{Duration: 10 * time.Millisecond, Key: key})
	checkTimeoutError(t, err, key)
	if !errors.Is(err, actor.ErrTimeout) {
		t.Errorf("errors.Is(%v, ErrTimeout) = false", err)
	}
}

// checkTimeoutError checks that err is an *RpcTimeoutError whose text ends
// with ". This timeout is controlled by KEY" and names key exactly once.
func checkTimeoutError(t *testing.T, err error, key string) {
	t.Helper()
	var te *actor.RpcTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not an *RpcTimeoutError", err, err)
	}
	if te.Key != key {
		t.Errorf("Key = %q, want %q", te.Key, key)
	}
	msg := err.Error()
	if suffix := ". This timeout is controlled by " + key; !strings.HasSuffix(msg, suffix) {
		t.Errorf("error %q does not end with %q", msg, suffix)
	}
	if n := strings.Count(msg, key); n != 1 {
		t.Errorf("error %q names %s %d times, want once", msg, key, n)
	}
}

func TestAskTimeoutKeyOnce(t *testing.T) {
	// Spark's "ask a message timeout on Future using RpcTimeout": a quick reply
	// beats a short timeout, a missing one times out with the key, and
	// awaiting the same future again does not repeat the key.
	e := newEnv(t, nil)
	ref := register(t, e, "future-timeout", &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		if text(msg) == "NeverReply" {
			return nil
		}
		ctx.Reply(msg)
		return nil
	}})
	const key = "spark.rpc.test.timeout"
	ok := ref.AskWithTimeout(testutil.Context(t, testTimeout), str("hi"), actor.RpcTimeout{Duration: testTimeout, Key: key})
	if res, err := ok.Result(); err != nil || text(res) != "hi" {
		t.Fatalf("quick ask = %v, %v; want hi", res, err)
	}
	f := ref.AskWithTimeout(testutil.Context(t, testTimeout), str("NeverReply"), actor.RpcTimeout{Duration: 10 * time.Millisecond, Key: key})
	_, err1 := f.Wait(testutil.Context(t, testTimeout))
	checkTimeoutError(t, err1, key)
	_, err2 := f.Result()
	checkTimeoutError(t, err2, key)
	_, err3 := f.Wait(testutil.Context(t, testTimeout))
	checkTimeoutError(t, err3, key)
	if err1.Error() != err3.Error() {
		t.Errorf("a second wait changed the error: %q, then %q", err1, err3)
	}
}

func TestAskAbort(t *testing.T) {
	e := newEnv(t, nil)
	asked := make(chan struct{})
	ref := register(t, e, "ask-abort", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error {
		close(asked)
		return nil // the reply never comes
	}})
	errAbort := errors.New("TestAbort")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	f := ref.AskWithTimeout(ctx, str("hello"), actor.RpcTimeout{Duration: time.Hour, Key: "spark.rpc.abort.timeout"})
	testutil.Recv(t, asked, testTimeout, "the ask to arrive")
	cancel(errAbort)
	_, err := f.Wait(testutil.Context(t, testTimeout))
	if !errors.Is(err, errAbort) {
		t.Fatalf("aborted ask failed with %v, want the cause %v", err, errAbort)
	}
	if !strings.Contains(err.Error(), "TestAbort") {
		t.Errorf("error %q does not mention TestAbort", err)
	}
	var te *actor.RpcTimeoutError
	if errors.As(err, &te) {
		t.Errorf("an aborted ask failed with a timeout: %v", err)
	}
	// An already cancelled context fails the ask before it is sent.
	if _, err := ref.AskSync(ctx, str("again")); !errors.Is(err, errAbort) {
		t.Errorf("ask with a cancelled context = %v, want %v", err, errAbort)
	}
}

func TestOnStartAndOnStop(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "start-stop", ep)
	if err := e.Stop(ref); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	ep.waitFor(t, "stop")
	if got, want := ep.Events(), []string{"start", "stop"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestOnErrorFromOnStart(t *testing.T) {
	e := newEnv(t, nil)
	oops := errors.New("Oops!")
	ep := &testEndpoint{start: func(*actor.Context) error { return oops }}
	ref := register(t, e, "error-in-start", ep)
	ep.waitFor(t, "error:")
	if errs := ep.Errors(); len(errs) != 1 || !errors.Is(errs[0], oops) {
		t.Fatalf("OnError got %v, want [%v]", errs, oops)
	}
	// The endpoint keeps running.
	if s := askString(t, ref, "still there"); s != "still there" {
		t.Fatalf("ask after the failed start = %q", s)
	}
}

func TestOnErrorFromOnStop(t *testing.T) {
	e := newEnv(t, nil)
	oops := errors.New("Oops!")
	ep := &testEndpoint{stop: func(*actor.Context) error { return oops }}
	ref := register(t, e, "error-in-stop", ep)
	if err := e.Stop(ref); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	ep.waitFor(t, "error:")
	if errs := ep.Errors(); len(errs) != 1 || !errors.Is(errs[0], oops) {
		t.Fatalf("OnError got %v, want [%v]", errs, oops)
	}
	if got, want := ep.Events(), []string{"start", "stop", "error:Oops!"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestOnErrorFromReceive(t *testing.T) {
	e := newEnv(t, nil)
	oops := errors.New("Oops!")
	ep := &testEndpoint{receive: func(_ *actor.Context, msg proto.Message) error {
		if text(msg) == "Foo" {
			return oops
		}
		return nil
	}}
	ref := register(t, e, "error-in-receive", ep)
	if err := ref.Send(str("Foo")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ep.waitFor(t, "error:")
	if errs := ep.Errors(); len(errs) != 1 || !errors.Is(errs[0], oops) {
		t.Fatalf("OnError got %v, want [%v]", errs, oops)
	}
	// A panic in Receive goes to OnError as a *PanicError.
	panicky := &testEndpoint{receive: func(*actor.Context, proto.Message) error { panic("boom") }}
	pref := register(t, e, "panic-in-receive", panicky)
	if err := pref.Send(str("x")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	panicky.waitFor(t, "error:")
	var pe *actor.PanicError
	if errs := panicky.Errors(); len(errs) != 1 || !errors.As(errs[0], &pe) || pe.Value != "boom" {
		t.Fatalf("OnError got %v, want one *PanicError(boom)", errs)
	}
	if len(pe.Stack) == 0 {
		t.Errorf("PanicError has no stack")
	}
	if s := askString(t, pref, "alive"); s != "alive" {
		t.Fatalf("ask after the panic = %q", s)
	}
}

func TestSelfInOnStart(t *testing.T) {
	e := newEnv(t, nil)
	selfs := make(chan *actor.Ref, 1)
	ref := register(t, e, "self-start", &testEndpoint{start: func(ctx *actor.Context) error {
		selfs <- ctx.Self()
		return nil
	}})
	self := testutil.Recv(t, selfs, testTimeout, "OnStart")
	if self == nil || self.Name() != ref.Name() || self.String() != ref.String() {
		t.Fatalf("Self() in OnStart = %v, want %v", self, ref)
	}
}

func TestSelfInReceive(t *testing.T) {
	e := newEnv(t, nil)
	selfs := make(chan *actor.Ref, 1)
	ref := register(t, e, "self-receive", &testEndpoint{receive: func(ctx *actor.Context, _ proto.Message) error {
		selfs <- ctx.Self()
		return nil
	}})
	if err := ref.Send(str("hi")); err != nil {
		t.Fatal(err)
	}
	self := testutil.Recv(t, selfs, testTimeout, "Receive")
	if self == nil || self.Name() != ref.Name() {
		t.Fatalf("Self() in Receive = %v, want %v", self, ref)
	}
	// Self can be used from the handler's point of view: ask through it.
	if s := askString(t, self, "via self"); s != "via self" {
		t.Fatalf("ask through Self() = %q", s)
	}
}

func TestSelfNilInOnStop(t *testing.T) {
	e := newEnv(t, nil)
	selfs := make(chan *actor.Ref, 1)
	ref := register(t, e, "self-stop", &testEndpoint{stop: func(ctx *actor.Context) error {
		selfs <- ctx.Self()
		return nil
	}})
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	if self := testutil.Recv(t, selfs, testTimeout, "OnStop"); self != nil {
		t.Fatalf("Self() in OnStop = %v, want nil", self)
	}
}

// counter is a serial endpoint with a deliberately unsynchronised counter:
// the race detector and the final count catch any concurrent Receive.
type counter struct{ n int64 }

func (c *counter) Receive(*actor.Context, proto.Message) error {
	c.n++
	return nil
}

func (c *counter) ReceiveAndReply(ctx *actor.CallContext, _ proto.Message) error {
	ctx.Reply(wrapperspb.Int64(c.n))
	return nil
}

func TestReceiveInSequence(t *testing.T) {
	// Several loop goroutines, so that concurrent processing would be possible.
	e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, "4"))
	const rounds, senders, perSender = 10, 10, 100
	for round := range rounds {
		c := &counter{}
		ref := register(t, e, fmt.Sprintf("sequence-%d", round), c)
		var wg sync.WaitGroup
		for range senders {
			wg.Go(func() {
				for range perSender {
					if err := ref.Send(str("a")); err != nil {
						t.Errorf("Send: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		// The ask queues behind every send, so it sees the final count.
		n, err := actor.AskAs[*wrapperspb.Int64Value](testutil.Context(t, testTimeout), ref, str("count"))
		if err != nil {
			t.Fatalf("round %d: ask: %v", round, err)
		}
		if n.GetValue() != senders*perSender {
			t.Fatalf("round %d: counter = %d, want %d", round, n.GetValue(), senders*perSender)
		}
		if err := e.Stop(ref); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		register(t, e, fmt.Sprintf("distinct-%d", i), &counter{})
	}
}

func TestStopTwiceRunsOnStopOnce(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "stop-twice", ep)
	for range 2 {
		if err := e.Stop(ref); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
	ep.waitFor(t, "stop")
	// Shutdown waits for every endpoint, so afterwards no second OnStop can come.
	shutdown(t, e)
	if n := ep.count("stop"); n != 1 {
		t.Fatalf("OnStop ran %d times, want 1 (calls %q)", n, ep.Events())
	}
}

func TestAskWithReply(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "send-with-reply", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		ctx.Reply(str("ack"))
		return nil
	}})
	f := ref.Ask(testutil.Context(t, testTimeout), str("Hi"))
	res, err := actor.ResultAs[*wrapperspb.StringValue](f)
	if err != nil || res.GetValue() != "ack" {
		t.Fatalf("ask = %v, %v; want ack", res, err)
	}
	select {
	case <-f.Done():
	default:
		t.Fatalf("Done() is not closed after Result returned")
	}
}

func TestAskWithSendFailure(t *testing.T) {
	e := newEnv(t, nil)
	oops := errors.New("Oops")
	ep := &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		ctx.SendFailure(oops)
		return nil
	}}
	ref := register(t, e, "send-failure", ep)
	_, err := ref.AskSync(testutil.Context(t, testTimeout), str("hi"))
	if !errors.Is(err, oops) {
		t.Fatalf("ask failed with %v, want %v", err, oops)
	}
	// SendFailure is an answer, not a handler error: OnError is not called.
	askString(t, register(t, e, "barrier", &testEndpoint{}), "x")
	if errs := ep.Errors(); len(errs) != 0 {
		t.Fatalf("OnError got %v, want nothing", errs)
	}
}

func TestAskWithReturnedError(t *testing.T) {
	// A returned error fails the asker and goes to OnError.
	e := newEnv(t, nil)
	oops := errors.New("Oops")
	ep := &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return oops }}
	ref := register(t, e, "returned-error", ep)
	if _, err := ref.AskSync(testutil.Context(t, testTimeout), str("hi")); !errors.Is(err, oops) {
		t.Fatalf("ask failed with %v, want %v", err, oops)
	}
	ep.waitFor(t, "error:")
	if errs := ep.Errors(); len(errs) != 1 || !errors.Is(errs[0], oops) {
		t.Fatalf("OnError got %v, want [%v]", errs, oops)
	}
}

func TestPanicInReceiveAndReply(t *testing.T) {
	e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, "1"))
	ep := &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		if text(msg) == "panic" {
			panic(errors.New("handler exploded"))
		}
		ctx.Reply(msg)
		return nil
	}}
	ref := register(t, e, "panic-in-ask", ep)
	for range 2 { // twice: the loop survived the first one
		_, err := ref.AskSync(testutil.Context(t, testTimeout), str("panic"))
		var pe *actor.PanicError
		if !errors.As(err, &pe) {
			t.Fatalf("ask failed with %v (%T), want a *PanicError", err, err)
		}
		if !strings.Contains(err.Error(), "handler exploded") {
			t.Errorf("error %q does not carry the panic value", err)
		}
	}
	if s := askString(t, ref, "later"); s != "later" {
		t.Fatalf("ask after the panic = %q", s)
	}
	other := register(t, e, "other", &testEndpoint{})
	if s := askString(t, other, "other"); s != "other" {
		t.Fatalf("other endpoint on the one-goroutine loop = %q", s)
	}
	errs := ep.Errors()
	if len(errs) != 2 {
		t.Fatalf("OnError got %d errors (%v), want 2", len(errs), errs)
	}
	for _, err := range errs {
		var pe *actor.PanicError
		if !errors.As(err, &pe) {
			t.Errorf("OnError got %v (%T), want a *PanicError", err, err)
		}
	}
}

func TestUnknownEndpointFailsFast(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "soon-gone", &testEndpoint{})
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	unknown, err := e.RefFromProto(&messages.EndpointRef{Address: e.Identity(), Name: "never-registered"})
	if err != nil {
		t.Fatalf("RefFromProto: %v", err)
	}
	for _, r := range []*actor.Ref{ref, unknown} {
		t.Run(r.Name(), func(t *testing.T) {
			checkNotFound := func(op string, err error) {
				t.Helper()
				var nf *actor.EndpointNotFoundError
				if !errors.As(err, &nf) {
					t.Fatalf("%s: error %v (%T), want *EndpointNotFoundError", op, err, err)
				}
				if want := "Could not find " + r.Name() + "."; err.Error() != want {
					t.Errorf("%s: error %q, want %q", op, err, want)
				}
				if !errors.Is(err, actor.ErrEndpointNotFound) {
					t.Errorf("%s: errors.Is(ErrEndpointNotFound) = false", op)
				}
			}
			checkNotFound("Send", r.Send(str("hi")))
			// The ask must fail at once, not after its (very long) timeout.
			f := r.AskWithTimeout(testutil.Context(t, testTimeout), str("hi"), actor.RpcTimeout{Duration: time.Hour, Key: "spark.rpc.askTimeout"})
			_, err := f.Wait(testutil.Context(t, testTimeout))
			checkNotFound("Ask", err)
		})
	}
}

func TestDuplicateName(t *testing.T) {
	e := newEnv(t, nil)
	register(t, e, "dup", &testEndpoint{})
	_, err := e.RegisterEndpoint("dup", &testEndpoint{})
	var de *actor.DuplicateEndpointError
	if !errors.As(err, &de) || de.Name != "dup" {
		t.Fatalf("second registration: %v (%T), want *DuplicateEndpointError", err, err)
	}
	if want := "There is already an RpcEndpoint called dup"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !errors.Is(err, actor.ErrDuplicateEndpoint) {
		t.Errorf("errors.Is(ErrDuplicateEndpoint) = false")
	}
}

func TestRegisterAfterShutdown(t *testing.T) {
	e := newEnv(t, nil)
	shutdown(t, e)
	_, err := e.RegisterEndpoint("late", &testEndpoint{})
	if !errors.Is(err, actor.ErrEnvStopped) {
		t.Fatalf("RegisterEndpoint after Shutdown = %v, want ErrEnvStopped", err)
	}
	if err.Error() != "RpcEnv has been stopped" {
		t.Errorf("error %q, want %q", err, "RpcEnv has been stopped")
	}
}

func TestQueuedMessagesBeforeOnStop(t *testing.T) {
	e := newEnv(t, nil)
	hold := make(chan struct{})
	ep := &testEndpoint{receive: func(_ *actor.Context, msg proto.Message) error {
		if text(msg) == "0" {
			<-hold // keep the next messages queued while Stop is called
		}
		return nil
	}}
	ref := register(t, e, "queued", ep)
	const n = 20
	for i := range n {
		if err := ref.Send(wrapperspb.Int64(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	ep.waitFor(t, "receive:0")
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	// Refused after the stop.
	if err := ref.Send(str("late")); !errors.Is(err, actor.ErrEndpointNotFound) {
		t.Errorf("Send after Stop = %v, want ErrEndpointNotFound", err)
	}
	close(hold)
	ep.waitFor(t, "stop")
	want := []string{"start"}
	for i := range n {
		want = append(want, fmt.Sprintf("receive:%d", i))
	}
	want = append(want, "stop")
	if got := ep.Events(); !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

// isolatedEndpoint has a dedicated message loop of its own.
type isolatedEndpoint struct {
	*testEndpoint
	threads int
}

func (e isolatedEndpoint) ThreadCount() int { return e.threads }

func TestIsolatedEndpointDoesNotBlockSharedLoop(t *testing.T) {
	e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, "1"))
	latch := make(chan struct{})
	blocked := make(chan struct{})
	iso := register(t, e, "isolated", isolatedEndpoint{threads: 1, testEndpoint: &testEndpoint{
		ask: func(ctx *actor.CallContext, _ proto.Message) error {
			close(blocked)
			<-latch
			ctx.Reply(str("hi"))
			return nil
		},
	}})
	normal := register(t, e, "normal", &testEndpoint{})
	f := iso.Ask(testutil.Context(t, testTimeout), str("hello"))
	testutil.Recv(t, blocked, testTimeout, "the isolated endpoint to block")
	// The one shared loop goroutine is free: the normal endpoint answers.
	if s := askString(t, normal, "hello"); s != "hello" {
		t.Fatalf("normal endpoint answered %q", s)
	}
	select {
	case <-f.Done():
		t.Fatalf("the blocked ask completed before its latch was released")
	default:
	}
	close(latch)
	res, err := f.Wait(testutil.Context(t, testTimeout))
	if err != nil || text(res) != "hi" {
		t.Fatalf("blocked ask = %v, %v; want hi", res, err)
	}
}

// concurrentEndpoint checks the rules of a dedicated loop with several
// goroutines: OnStart alone and first, OnStop alone and last, handlers in
// between running at the same time.
type concurrentEndpoint struct {
	threads  int
	startGo  chan struct{} // OnStart blocks until it is closed
	entered  chan struct{} // a handler is running
	release  chan struct{} // handlers block until it is closed
	active   atomic.Int32
	started  atomic.Bool
	stopping atomic.Bool
	stopped  chan struct{}
	mu       sync.Mutex
	problems []string
}

func (c *concurrentEndpoint) problem(format string, args ...any) {
	c.mu.Lock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *concurrentEndpoint) ThreadCount() int { return c.threads }

func (c *concurrentEndpoint) OnStart(*actor.Context) error {
	if n := c.active.Load(); n != 0 {
		c.problem("OnStart ran beside %d handlers", n)
	}
	<-c.startGo
	c.started.Store(true)
	return nil
}

func (c *concurrentEndpoint) handle() {
	c.active.Add(1)
	defer c.active.Add(-1)
	if !c.started.Load() {
		c.problem("a handler ran before OnStart returned")
	}
	if c.stopping.Load() {
		c.problem("a handler ran after OnStop began")
	}
	c.entered <- struct{}{}
	<-c.release
}

func (c *concurrentEndpoint) Receive(*actor.Context, proto.Message) error {
	c.handle()
	return nil
}

func (c *concurrentEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	c.handle()
	ctx.Reply(msg)
	return nil
}

func (c *concurrentEndpoint) OnStop(*actor.Context) error {
	c.stopping.Store(true)
	if n := c.active.Load(); n != 0 {
		c.problem("OnStop ran beside %d handlers", n)
	}
	close(c.stopped)
	return nil
}

func TestDedicatedLoopRunsConcurrently(t *testing.T) {
	e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, "1"))
	const threads, msgs = 4, 8
	c := &concurrentEndpoint{
		threads: threads,
		startGo: make(chan struct{}),
		entered: make(chan struct{}, msgs),
		release: make(chan struct{}),
		stopped: make(chan struct{}),
	}
	ref := register(t, e, "concurrent", c)
	var futs []*actor.Future
	for i := range msgs {
		if i%2 == 0 {
			futs = append(futs, ref.Ask(testutil.Context(t, testTimeout), wrapperspb.Int64(int64(i))))
		} else if err := ref.Send(wrapperspb.Int64(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	close(c.startGo)
	// Two handlers inside at the same time prove the overlap: each blocks
	// until release is closed.
	testutil.Recv(t, c.entered, testTimeout, "a first handler")
	testutil.Recv(t, c.entered, testTimeout, "a second handler running at the same time")
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	close(c.release)
	for _, f := range futs {
		if _, err := f.Wait(testutil.Context(t, testTimeout)); err != nil {
			t.Errorf("ask: %v", err)
		}
	}
	testutil.Recv(t, c.stopped, testTimeout, "OnStop")
	if len(c.entered) != msgs-2 {
		t.Errorf("%d handlers ran, want %d", len(c.entered)+2, msgs)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		t.Error(p)
	}
}

func TestRpcTimeoutFromConf(t *testing.T) {
	conf := actor.NewConf().
		Set("spark.my.timeout", "30s").
		Set("spark.my.other.timeout", "100s").
		Set("spark.my.bare.timeout", "7").
		Set("spark.my.bad.timeout", "ten seconds")
	tests := []struct {
		name    string
		keys    []string
		def     string
		want    actor.RpcTimeout
		wantErr error
	}{
		{name: "single set key", keys: []string{"spark.my.timeout"}, want: actor.RpcTimeout{Duration: 30 * time.Second, Key: "spark.my.timeout"}},
		{name: "first set key wins", keys: []string{"spark.unset", "spark.my.timeout", "spark.my.other.timeout"}, want: actor.RpcTimeout{Duration: 30 * time.Second, Key: "spark.my.timeout"}},
		{name: "set key ignores default", keys: []string{"spark.my.other.timeout"}, def: "1s", want: actor.RpcTimeout{Duration: 100 * time.Second, Key: "spark.my.other.timeout"}},
		{name: "bare number is seconds", keys: []string{"spark.my.bare.timeout"}, want: actor.RpcTimeout{Duration: 7 * time.Second, Key: "spark.my.bare.timeout"}},
		{name: "default labelled with first key", keys: []string{"spark.unset", "spark.also.unset"}, def: "1s", want: actor.RpcTimeout{Duration: time.Second, Key: "spark.unset"}},
		{name: "unset without default", keys: []string{"spark.unset"}, wantErr: actor.ErrKeyNotSet},
		{name: "malformed value", keys: []string{"spark.my.bad.timeout"}, wantErr: &actor.ConfError{}},
		{name: "malformed default", keys: []string{"spark.unset"}, def: "soon", wantErr: &actor.ConfError{}},
		{name: "no key", keys: nil, def: "1s", wantErr: actor.ErrInvalidTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := actor.NewRpcTimeout(conf, tt.keys, tt.def)
			switch want := tt.wantErr.(type) {
			case nil:
				if err != nil || got != tt.want {
					t.Fatalf("NewRpcTimeout = %v, %v; want %v", got, err, tt.want)
				}
			case *actor.ConfError:
				var ce *actor.ConfError
				if !errors.As(err, &ce) {
					t.Fatalf("error %v (%T), want *ConfError", err, err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("error %v, want %v", err, want)
				}
				var ce *actor.ConfError
				if want == actor.ErrKeyNotSet && (!errors.As(err, &ce) || ce.Key != tt.keys[0]) {
					t.Fatalf("error %v does not name key %s", err, tt.keys[0])
				}
			}
		})
	}
}

func TestDefaultAskTimeout(t *testing.T) {
	tests := []struct {
		name string
		conf *actor.Conf
		want actor.RpcTimeout
	}{
		{"default", actor.NewConf(), actor.RpcTimeout{Duration: 120 * time.Second, Key: actor.KeyAskTimeout}},
		{"network timeout", actor.NewConf().Set(actor.KeyNetworkTimeout, "50s"), actor.RpcTimeout{Duration: 50 * time.Second, Key: actor.KeyNetworkTimeout}},
		{"ask timeout first", actor.NewConf().Set(actor.KeyNetworkTimeout, "50s").Set(actor.KeyAskTimeout, "3s"), actor.RpcTimeout{Duration: 3 * time.Second, Key: actor.KeyAskTimeout}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.conf)
			if got := e.AskTimeout(); got != tt.want {
				t.Errorf("AskTimeout() = %v, want %v", got, tt.want)
			}
			got, err := actor.AskTimeout(tt.conf)
			if err != nil || got != tt.want {
				t.Errorf("actor.AskTimeout = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	e := newEnv(t, actor.NewConf().Set(actor.KeyLookupTimeout, "5s"))
	if want := (actor.RpcTimeout{Duration: 5 * time.Second, Key: actor.KeyLookupTimeout}); e.LookupTimeout() != want {
		t.Errorf("LookupTimeout() = %v, want %v", e.LookupTimeout(), want)
	}
}

func TestDefaultAskTimeoutNamesKey(t *testing.T) {
	// An ask with the env's default timeout names the key that set it.
	e := newEnv(t, actor.NewConf().Set(actor.KeyNetworkTimeout, "20ms"))
	ref := register(t, e, "silent", &testEndpoint{ask: func(*actor.CallContext, proto.Message) error { return nil }})
	_, err := ref.AskSync(testutil.Context(t, testTimeout), str("hi"))
	checkTimeoutError(t, err, actor.KeyNetworkTimeout)
}

func TestPostWhileStopping(t *testing.T) {
	// InboxSuite "post: multiple threads": while goroutines post, the
	// endpoint (or the whole env) stops. Every message is processed, refused
	// by Send, or reported dropped; none vanishes.
	for _, how := range []string{"Stop", "Shutdown"} {
		for _, threads := range []int{0, 1, 4} { // shared loop, dedicated loops
			t.Run(fmt.Sprintf("%s/threads=%d", how, threads), func(t *testing.T) {
				for iter := range 20 {
					postWhileStopping(t, how, threads, iter)
				}
			})
		}
	}
}

func postWhileStopping(t *testing.T, how string, threads, iter int) {
	const senders, perSender = 10, 100
	var processed, droppedCB, refused atomic.Int64
	e := newEnv(t, actor.NewConf().Set(actor.KeyDispatcherThreads, "2"),
		actor.WithDropHandler(func(name string, _ proto.Message) {
			if name == "sink" {
				droppedCB.Add(1)
			}
		}))
	ep := &testEndpoint{receive: func(*actor.Context, proto.Message) error {
		processed.Add(1)
		return nil
	}}
	var endpoint actor.Endpoint = ep
	if threads > 0 {
		endpoint = isolatedEndpoint{testEndpoint: ep, threads: threads}
	}
	ref := register(t, e, "sink", endpoint)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for range senders {
		wg.Go(func() {
			<-ready
			for range perSender {
				switch err := ref.Send(str("m")); {
				case err == nil:
				case errors.Is(err, actor.ErrEndpointNotFound), errors.Is(err, actor.ErrEnvStopped):
					refused.Add(1)
				default:
					t.Errorf("Send: unexpected error %v", err)
				}
			}
		})
	}
	close(ready)
	if how == "Stop" {
		if err := e.Stop(ref); err != nil {
			t.Fatal(err)
		}
	} else {
		shutdown(t, e)
	}
	wg.Wait()
	const sent = senders * perSender
	total := func() int64 { return processed.Load() + droppedCB.Load() + refused.Load() }
	testutil.Eventually(t, testTimeout, fmt.Sprintf("iteration %d: processed %d + dropped %d + refused %d != sent %d",
		iter, processed.Load(), droppedCB.Load(), refused.Load(), sent), func() bool { return total() == sent })
	ep.waitFor(t, "stop")
	shutdown(t, e)
	if got := int64(e.Dropped()); got != droppedCB.Load() {
		t.Errorf("iteration %d: Dropped() = %d, the drop handler counted %d", iter, got, droppedCB.Load())
	}
	if n := total(); n != sent {
		t.Errorf("iteration %d: %d messages accounted for after termination, want %d", iter, n, sent)
	}
	if n := ep.count("stop"); n != 1 {
		t.Errorf("iteration %d: OnStop ran %d times", iter, n)
	}
}

func TestUnsupportedMessage(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "picky", &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		if _, ok := msg.(*wrapperspb.StringValue); !ok {
			return actor.ErrUnsupportedMessage
		}
		ctx.Reply(msg)
		return nil
	}})
	_, err := ref.AskSync(testutil.Context(t, testTimeout), wrapperspb.Int64(1))
	var ue *actor.UnsupportedMessageError
	if !errors.As(err, &ue) || !errors.Is(err, actor.ErrUnsupportedMessage) {
		t.Fatalf("ask failed with %v (%T), want *UnsupportedMessageError", err, err)
	}
	if want := "Unsupported message google.protobuf.Int64Value"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
	// An endpoint that is not a Replier fails every ask the same way.
	plain := register(t, e, "receive-only", actor.ReceiveFunc(func(*actor.Context, proto.Message) error { return nil }))
	_, err = plain.AskSync(testutil.Context(t, testTimeout), str("hi"))
	if !errors.As(err, &ue) || ue.Type != "google.protobuf.StringValue" {
		t.Fatalf("ask to a receive-only endpoint failed with %v, want *UnsupportedMessageError", err)
	}
	if !strings.HasPrefix(err.Error(), "Unsupported message google.protobuf.StringValue") {
		t.Errorf("error %q", err)
	}
}

func TestAskAsWrongReplyType(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "echo", &testEndpoint{})
	got, err := actor.AskAs[*wrapperspb.Int64Value](testutil.Context(t, testTimeout), ref, str("a string"))
	var rte *actor.ReplyTypeError
	if !errors.As(err, &rte) {
		t.Fatalf("AskAs = %v, %v; want *ReplyTypeError", got, err)
	}
	if got != nil {
		t.Errorf("AskAs returned %v with the error, want nil", got)
	}
	if rte.Want != "google.protobuf.Int64Value" || rte.Got != "google.protobuf.StringValue" {
		t.Errorf("ReplyTypeError = %+v", rte)
	}
}

func TestReplyLaterFromAnotherGoroutine(t *testing.T) {
	e := newEnv(t, nil)
	pending := make(chan *actor.CallContext, 1)
	ref := register(t, e, "later", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		pending <- ctx
		return nil
	}})
	f := ref.Ask(testutil.Context(t, testTimeout), str("q"))
	cc := testutil.Recv(t, pending, testTimeout, "the ask")
	done := make(chan struct{})
	go func() {
		defer close(done)
		cc.Reply(str("first"))
		cc.Reply(str("second"))         // ignored
		cc.SendFailure(errors.New("x")) // ignored
	}()
	testutil.Recv(t, done, testTimeout, "the replying goroutine")
	res, err := f.Wait(testutil.Context(t, testTimeout))
	if err != nil || text(res) != "first" {
		t.Fatalf("ask = %v, %v; want the first reply", res, err)
	}
	if !cc.SenderAddress().IsZero() {
		t.Errorf("SenderAddress of a local ask on a local env = %v, want zero", cc.SenderAddress())
	}
}

func TestReplyNil(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "nil-reply", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		ctx.Reply(nil)
		return nil
	}})
	if _, err := ref.AskSync(testutil.Context(t, testTimeout), str("q")); !errors.Is(err, actor.ErrNilMessage) {
		t.Fatalf("ask answered with a nil reply = %v, want ErrNilMessage", err)
	}
}

func TestPanicInOnErrorIsContained(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "bad-onerror", &panickyOnError{})
	if err := ref.Send(str("x")); err != nil {
		t.Fatal(err)
	}
	if s := askString(t, ref, "alive"); s != "alive" {
		t.Fatalf("ask after OnError panicked = %q", s)
	}
}

type panickyOnError struct{}

func (panickyOnError) Receive(*actor.Context, proto.Message) error { return errors.New("fail") }
func (panickyOnError) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(msg)
	return nil
}
func (panickyOnError) OnError(*actor.Context, error) { panic("OnError panics too") }

func TestContextStop(t *testing.T) {
	// An endpoint stops itself (Spark's RpcEndpoint.stop()).
	e := newEnv(t, nil)
	ep := &testEndpoint{receive: func(ctx *actor.Context, msg proto.Message) error {
		if text(msg) == "quit" {
			return ctx.Stop()
		}
		return nil
	}}
	ref := register(t, e, "self-stopper", ep)
	if err := ref.Send(str("quit")); err != nil {
		t.Fatal(err)
	}
	ep.waitFor(t, "stop")
	if _, ok := e.Endpoint("self-stopper"); ok {
		t.Errorf("Endpoint still finds a stopped endpoint")
	}
	// The name is free again.
	register(t, e, "self-stopper", &testEndpoint{})
}

func TestShutdown(t *testing.T) {
	e := newEnv(t, nil)
	var eps []*testEndpoint
	var refs []*actor.Ref
	for i := range 5 {
		ep := &testEndpoint{}
		eps = append(eps, ep)
		var opt actor.Endpoint = ep
		if i == 4 {
			opt = isolatedEndpoint{testEndpoint: ep, threads: 2}
		}
		refs = append(refs, register(t, e, fmt.Sprintf("ep-%d", i), opt))
	}
	shutdown(t, e)
	select {
	case <-e.Terminated():
	default:
		t.Fatalf("Terminated() not closed after Shutdown returned")
	}
	if err := e.AwaitTermination(testutil.Context(t, testTimeout)); err != nil {
		t.Errorf("AwaitTermination: %v", err)
	}
	for i, ep := range eps {
		if n := ep.count("stop"); n != 1 {
			t.Errorf("endpoint %d: OnStop ran %d times", i, n)
		}
	}
	ref := refs[0]
	ctx := testutil.Context(t, testTimeout)
	checks := map[string]error{
		"Send":             ref.Send(str("x")),
		"Ask":              futErr(ref.Ask(ctx, str("x"))),
		"AskSync":          second(ref.AskSync(ctx, str("x"))),
		"AskAs":            second(actor.AskAs[*wrapperspb.StringValue](ctx, ref, str("x"))),
		"RegisterEndpoint": second(e.RegisterEndpoint("new", &testEndpoint{})),
		"SetupEndpointRef": second(e.SetupEndpointRef(ctx, actor.NewRpcAddress("localhost", 7077), "x")),
		"SetupByURI":       second(e.SetupEndpointRefByURI(ctx, "spark://x@localhost:7077")),
		"Send to isolated": refs[4].Send(str("x")),
		"Ask another":      futErr(refs[3].Ask(ctx, str("x"))),
	}
	for op, err := range checks {
		if !errors.Is(err, actor.ErrEnvStopped) {
			t.Errorf("%s after Shutdown = %v, want ErrEnvStopped", op, err)
		}
	}
	// Stop and Shutdown stay harmless.
	if err := e.Stop(ref); err != nil && !errors.Is(err, actor.ErrEnvStopped) {
		t.Errorf("Stop after Shutdown = %v", err)
	}
	if err := e.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown = %v", err)
	}
}

func futErr(f *actor.Future) error {
	_, err := f.Result()
	return err
}

func second[T any](_ T, err error) error { return err }

func TestAwaitTerminationBoundedByContext(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop waiting")
	cancel(stop)
	if err := e.AwaitTermination(ctx); !errors.Is(err, stop) {
		t.Fatalf("AwaitTermination of a running env with an ended context = %v, want %v", err, stop)
	}
	// Shutdown waits for an endpoint whose handler is still running, and
	// gives up when its context ends.
	hold := make(chan struct{})
	entered := make(chan struct{})
	ref := register(t, e, "busy", &testEndpoint{receive: func(*actor.Context, proto.Message) error {
		close(entered)
		<-hold
		return nil
	}})
	if err := ref.Send(str("x")); err != nil {
		t.Fatal(err)
	}
	testutil.Recv(t, entered, testTimeout, "the handler")
	if err := e.Shutdown(ctx); !errors.Is(err, stop) {
		t.Errorf("Shutdown with an ended context while a handler runs = %v, want %v", err, stop)
	}
	close(hold)
	if err := e.AwaitTermination(testutil.Context(t, testTimeout)); err != nil {
		t.Errorf("AwaitTermination: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, nil)
	ref := register(t, e, "target", &testEndpoint{})
	ctx := testutil.Context(t, testTimeout)
	tests := []struct {
		name string
		err  func() error
		want error
	}{
		{"Send nil", func() error { return ref.Send(nil) }, actor.ErrNilMessage},
		{"Ask nil", func() error { return futErr(ref.Ask(ctx, nil)) }, actor.ErrNilMessage},
		{"AskSync nil", func() error { return second(ref.AskSync(ctx, nil)) }, actor.ErrNilMessage},
		{"empty name", func() error { return second(e.RegisterEndpoint("", &testEndpoint{})) }, actor.ErrInvalidName},
		{"name with slash", func() error { return second(e.RegisterEndpoint("a/b", &testEndpoint{})) }, actor.ErrInvalidName},
		{"name with at", func() error { return second(e.RegisterEndpoint("a@b", &testEndpoint{})) }, actor.ErrInvalidName},
		{"name with space", func() error { return second(e.RegisterEndpoint("a b", &testEndpoint{})) }, actor.ErrInvalidName},
		{"the transport's control target", func() error { return second(e.RegisterEndpoint("credit$", &testEndpoint{})) }, actor.ErrInvalidName},
		{"a reply future's name", func() error { return second(e.RegisterEndpoint("future$.abc", &testEndpoint{})) }, actor.ErrInvalidName},
		{"nil endpoint", func() error { return second(e.RegisterEndpoint("nil-ep", nil)) }, actor.ErrInvalidName},
		{"duplicate name", func() error { return second(e.RegisterEndpoint("target", &testEndpoint{})) }, actor.ErrDuplicateEndpoint},
		{"Stop nil", func() error { return e.Stop(nil) }, actor.ErrInvalidName},
		{"zero timeout", func() error {
			return futErr(ref.AskWithTimeout(ctx, str("x"), actor.RpcTimeout{Key: "spark.zero"}))
		}, actor.ErrInvalidTimeout},
		{"negative timeout", func() error {
			return second(ref.AskSyncWithTimeout(ctx, str("x"), actor.RpcTimeout{Duration: -time.Second, Key: "spark.neg"}))
		}, actor.ErrInvalidTimeout},
		{"RefFromProto nil", func() error { return second(e.RefFromProto(nil)) }, actor.ErrInvalidName},
		{"RefFromProto empty", func() error { return second(e.RefFromProto(&messages.EndpointRef{})) }, actor.ErrInvalidName},
		{"RefFromProto bad address", func() error {
			return second(e.RefFromProto(&messages.EndpointRef{Address: "no port here", Name: "x"}))
		}, &actor.InvalidURLError{}},
		{"SetupEndpointRefByURI garbage", func() error {
			return second(e.SetupEndpointRefByURI(ctx, "not a url"))
		}, &actor.InvalidURLError{}},
		{"SetupEndpointRefByURI no name", func() error {
			return second(e.SetupEndpointRefByURI(ctx, "spark://localhost:7077"))
		}, &actor.InvalidURLError{}},
		{"remote ref without transport", func() error {
			return second(e.RemoteRef(actor.NewRpcAddress("localhost", 7077), "x").AskSync(ctx, str("x")))
		}, actor.ErrNoTransport},
		{"send to remote ref without transport", func() error {
			return e.RemoteRef(actor.NewRpcAddress("localhost", 7077), "x").Send(str("x"))
		}, actor.ErrNoTransport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			if _, isType := tt.want.(*actor.InvalidURLError); isType {
				var ue *actor.InvalidURLError
				if !errors.As(err, &ue) {
					t.Fatalf("error %v (%T), want *InvalidURLError", err, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
	if err := (actor.RpcTimeout{Duration: time.Second, Key: "k"}).Validate(); err != nil {
		t.Errorf("Validate of a positive timeout = %v", err)
	}
	if err := actor.InfiniteTimeout().Validate(); err != nil {
		t.Errorf("Validate of InfiniteTimeout = %v", err)
	}
	// The env is unharmed.
	if s := askString(t, ref, "ok"); s != "ok" {
		t.Fatalf("ask after bad input = %q", s)
	}
}

func TestNewEnvMalformedConf(t *testing.T) {
	for _, key := range []string{actor.KeyAskTimeout, actor.KeyNetworkTimeout, actor.KeyLookupTimeout, actor.KeyDispatcherThreads} {
		t.Run(key, func(t *testing.T) {
			e, err := actor.NewEnv("bad", actor.NewConf().Set(key, "12 parsecs"), actor.WithLogger(testLogger(t)))
			var ce *actor.ConfError
			if !errors.As(err, &ce) || ce.Key != key {
				if e != nil {
					shutdown(t, e)
				}
				t.Fatalf("NewEnv with a malformed %s = %v (%T), want a *ConfError naming it", key, err, err)
			}
		})
	}
}

func TestNewEnvMalformedTransportConf(t *testing.T) {
	n := actor.NewMemNetwork()
	e, err := actor.NewEnv("bad", actor.NewConf().Set(actor.KeyMessageMaxSize, "huge"),
		actor.WithLogger(testLogger(t)), actor.WithTransport(n.Transport("host1", 1)))
	var ce *actor.ConfError
	if !errors.As(err, &ce) || ce.Key != actor.KeyMessageMaxSize {
		if e != nil {
			shutdown(t, e)
		}
		t.Fatalf("NewEnv with a malformed %s = %v, want a *ConfError naming it", actor.KeyMessageMaxSize, err)
	}
}

func TestProtoactorRequestLocally(t *testing.T) {
	// Plain protoactor code can talk to an endpoint through its PID.
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "pid", ep)
	res, err := e.System().Root.RequestFuture(ref.PID(), str("raw"), testTimeout).Result()
	if err != nil || text(res.(proto.Message)) != "raw" {
		t.Fatalf("RequestFuture = %v, %v; want raw", res, err)
	}
	e.System().Root.Send(ref.PID(), str("one-way"))
	ep.waitFor(t, "receive:one-way")
}

func TestRegisterWhileShuttingDown(t *testing.T) {
	// Every registration that succeeds gets its OnStop from the Shutdown;
	// every other one fails with ErrEnvStopped.
	for iter := range 20 {
		e := newEnv(t, nil)
		var mu sync.Mutex
		var registered []*testEndpoint
		var wg sync.WaitGroup
		ready := make(chan struct{})
		for g := range 4 {
			wg.Go(func() {
				<-ready
				for i := range 25 {
					ep := &testEndpoint{}
					_, err := e.RegisterEndpoint(fmt.Sprintf("ep-%d-%d", g, i), ep)
					switch {
					case err == nil:
						mu.Lock()
						registered = append(registered, ep)
						mu.Unlock()
					case errors.Is(err, actor.ErrEnvStopped):
					default:
						t.Errorf("RegisterEndpoint: %v", err)
					}
				}
			})
		}
		close(ready)
		shutdown(t, e)
		wg.Wait()
		for _, ep := range registered {
			if got := ep.Events(); !slices.Equal(got, []string{"start", "stop"}) {
				t.Fatalf("iteration %d: a registered endpoint saw %q after Shutdown, want start, stop", iter, got)
			}
		}
	}
}

func TestRegisterSameNameRightAfterStop(t *testing.T) {
	// Stop releases the name at once, as Spark's unregisterRpcEndpoint
	// does, even while the old endpoint is still busy with queued messages.
	e := newEnv(t, nil)
	hold := make(chan struct{})
	old := &testEndpoint{receive: func(*actor.Context, proto.Message) error {
		<-hold
		return nil
	}}
	ref := register(t, e, "reused", old)
	if err := ref.Send(str("busy")); err != nil {
		t.Fatal(err)
	}
	old.waitFor(t, "receive:busy")
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	fresh := &testEndpoint{}
	ref2, err := e.RegisterEndpoint("reused", fresh)
	close(hold)
	if err != nil {
		t.Fatalf("RegisterEndpoint right after Stop: %v", err)
	}
	if s := askString(t, ref2, "new"); s != "new" {
		t.Fatalf("ask to the new endpoint = %q", s)
	}
	old.waitFor(t, "stop")
	if got, ok := e.Endpoint("reused"); !ok || got != ref2 {
		t.Fatalf("Endpoint(reused) = %v, %v; want the new endpoint", got, ok)
	}
	if s := askString(t, ref2, "still"); s != "still" {
		t.Fatalf("ask to the new endpoint after the old one stopped = %q", s)
	}
	if fresh.count("stop") != 0 {
		t.Fatalf("the old endpoint's stop stopped the new one: %q", fresh.Events())
	}
}

// A zero or negative timeout in the configuration is refused where the
// configuration is read, naming its key, with ErrInvalidTimeout: an env
// does not start to fail every ask it makes.
func TestNonPositiveTimeoutsRefused(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{actor.KeyNetworkTimeout, "0s"},
		{actor.KeyNetworkTimeout, "0"},
		{actor.KeyNetworkTimeout, "-1s"},
		{actor.KeyAskTimeout, "0ms"},
		{actor.KeyLookupTimeout, "-5"},
	} {
		conf := actor.NewConf().Set(tc.key, tc.value)
		_, err := actor.NewEnv("timeouts", conf)
		var ce *actor.ConfError
		if !errors.Is(err, actor.ErrInvalidTimeout) || !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("NewEnv with %s=%s: %v, want ErrInvalidTimeout naming the key", tc.key, tc.value, err)
		}
	}
}

// Env.Stop of another env's ref is refused (ErrEndpointNotFound) and leaves
// that endpoint running under its name. Before, it stopped the endpoint and
// left its env's name table holding it: every Send failed, and the name
// could not be registered again for the rest of that env's life.
func TestStopOfAnotherEnvsRefIsRefused(t *testing.T) {
	a := newEnv(t, nil)
	b, err := actor.NewEnv("other", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, b) })
	refB := register(t, b, "worker", &testEndpoint{})
	if err := a.Stop(refB); !errors.Is(err, actor.ErrEndpointNotFound) {
		t.Errorf("a.Stop(ref of b) = %v, want an error matching ErrEndpointNotFound", err)
	}
	if got := askString(t, refB, "still there?"); got != "still there?" {
		t.Errorf("b's endpoint after a.Stop(refB) answered %q", got)
	}
}
