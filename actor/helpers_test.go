package actor_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// testTimeout bounds every wait of a test. It is generous: tests never
// assert speed, it only keeps a broken test from hanging.
const testTimeout = 10 * time.Second

// testLogger sends warnings and errors to t.Log.
func testLogger(t testing.TB) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
}

// newEnv creates an env that logs to t and is shut down when the test ends.
func newEnv(t testing.TB, conf *actor.Conf, opts ...actor.Option) *actor.Env {
	t.Helper()
	opts = append([]actor.Option{actor.WithLogger(testLogger(t))}, opts...)
	e, err := actor.NewEnv(strings.ReplaceAll(t.Name(), "/", "-"), conf, opts...)
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	t.Cleanup(func() { shutdown(t, e) })
	return e
}

// shutdown shuts e down and fails t when that does not finish in time.
func shutdown(t testing.TB, e *actor.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown of %s: %v", e.Name(), err)
	}
}

// register registers ep under name and fails t on error.
func register(t testing.TB, e *actor.Env, name string, ep actor.Endpoint) *actor.Ref {
	t.Helper()
	ref, err := e.RegisterEndpoint(name, ep)
	if err != nil {
		t.Fatalf("RegisterEndpoint(%q): %v", name, err)
	}
	return ref
}

// str makes a StringValue message.
func str(s string) *wrapperspb.StringValue { return wrapperspb.String(s) }

// text is a short form of a test message for event logs.
func text(msg proto.Message) string {
	switch m := msg.(type) {
	case *wrapperspb.StringValue:
		return m.GetValue()
	case *wrapperspb.Int64Value:
		return strconv.FormatInt(m.GetValue(), 10)
	case nil:
		return "<nil>"
	}
	return string(msg.ProtoReflect().Descriptor().FullName())
}

// askString asks ref with s and returns the text of the reply.
func askString(t testing.TB, ref *actor.Ref, s string) string {
	t.Helper()
	res, err := actor.AskAs[*wrapperspb.StringValue](testutil.Context(t, testTimeout), ref, str(s))
	if err != nil {
		t.Fatalf("ask %q to %s: %v", s, ref, err)
	}
	return res.GetValue()
}

// testEndpoint implements every optional endpoint interface and records
// each call as an event ("start", "receive:hi", "ask:hi", "error:Oops",
// "connected:host:port", ...). By default it echoes asks; the func fields
// replace a hook's behaviour after the event is recorded.
type testEndpoint struct {
	receive func(ctx *actor.Context, msg proto.Message) error
	ask     func(ctx *actor.CallContext, msg proto.Message) error
	start   func(ctx *actor.Context) error
	stop    func(ctx *actor.Context) error

	mu     sync.Mutex
	events []string
	errs   []error
}

var (
	_ actor.Replier             = (*testEndpoint)(nil)
	_ actor.Starter             = (*testEndpoint)(nil)
	_ actor.Stopper             = (*testEndpoint)(nil)
	_ actor.ErrorHandler        = (*testEndpoint)(nil)
	_ actor.ConnectHandler      = (*testEndpoint)(nil)
	_ actor.DisconnectHandler   = (*testEndpoint)(nil)
	_ actor.NetworkErrorHandler = (*testEndpoint)(nil)
)

func (e *testEndpoint) record(ev string) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}

func (e *testEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	e.record("receive:" + text(msg))
	if e.receive != nil {
		return e.receive(ctx, msg)
	}
	return nil
}

func (e *testEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	e.record("ask:" + text(msg))
	if e.ask != nil {
		return e.ask(ctx, msg)
	}
	ctx.Reply(msg)
	return nil
}

func (e *testEndpoint) OnStart(ctx *actor.Context) error {
	e.record("start")
	if e.start != nil {
		return e.start(ctx)
	}
	return nil
}

func (e *testEndpoint) OnStop(ctx *actor.Context) error {
	e.record("stop")
	if e.stop != nil {
		return e.stop(ctx)
	}
	return nil
}

func (e *testEndpoint) OnError(_ *actor.Context, err error) {
	e.mu.Lock()
	e.events = append(e.events, "error:"+err.Error())
	e.errs = append(e.errs, err)
	e.mu.Unlock()
}

func (e *testEndpoint) OnConnected(_ *actor.Context, addr actor.RpcAddress) error {
	e.record("connected:" + addr.String())
	return nil
}

func (e *testEndpoint) OnDisconnected(_ *actor.Context, addr actor.RpcAddress) error {
	e.record("disconnected:" + addr.String())
	return nil
}

func (e *testEndpoint) OnNetworkError(_ *actor.Context, err error, addr actor.RpcAddress) error {
	e.record("networkError:" + err.Error() + "@" + addr.String())
	return nil
}

// Events returns a copy of the recorded events.
func (e *testEndpoint) Events() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

// Errors returns a copy of the errors OnError got.
func (e *testEndpoint) Errors() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// count returns how many recorded events start with prefix.
func (e *testEndpoint) count(prefix string) int {
	n := 0
	for _, ev := range e.Events() {
		if strings.HasPrefix(ev, prefix) {
			n++
		}
	}
	return n
}

// waitFor waits until an event starting with prefix was recorded.
func (e *testEndpoint) waitFor(t testing.TB, prefix string) {
	t.Helper()
	testutil.Eventually(t, testTimeout, fmt.Sprintf("event %q; got %q", prefix, e.Events()), func() bool { return e.count(prefix) > 0 })
}
