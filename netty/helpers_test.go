package netty_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// waitFor bounds every wait of the tests.
const waitFor = 10 * time.Second

func testLogger(t testing.TB) zerolog.Logger {
	if os.Getenv("NETTY_TEST_LOG") != "" {
		return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
	}
	return zerolog.Nop()
}

// newEnv starts a networked env on 127.0.0.1 port 0 that is shut down when
// the test ends.
func newEnv(t testing.TB, name string, conf *actor.Conf, opts ...netty.Option) *actor.Env {
	t.Helper()
	opts = append([]netty.Option{netty.WithLogger(testLogger(t))}, opts...)
	env, err := netty.NewEnv(name, conf, opts...)
	if err != nil {
		t.Fatalf("NewEnv(%s): %v", name, err)
	}
	t.Cleanup(func() { shutdown(t, env) })
	return env
}

func newClientEnv(t testing.TB, name string, conf *actor.Conf, opts ...netty.Option) *actor.Env {
	t.Helper()
	return newEnv(t, name, conf, append(opts, netty.WithClientMode())...)
}

func shutdown(t testing.TB, env *actor.Env) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil && !errors.Is(err, actor.ErrEnvStopped) {
		t.Errorf("shutdown %s: %v", env.Name(), err)
	}
}

func str(s string) *wrapperspb.StringValue { return wrapperspb.String(s) }

// echo replies with what it is asked and records what it is sent.
type echo struct{ got chan proto.Message }

func newEcho() *echo { return &echo{got: make(chan proto.Message, 1024)} }

func (e *echo) Receive(_ *actor.Context, msg proto.Message) error {
	e.got <- msg
	return nil
}

func (e *echo) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(msg)
	return nil
}

func register(t testing.TB, env *actor.Env, name string, ep actor.Endpoint) *actor.Ref {
	t.Helper()
	ref, err := env.RegisterEndpoint(name, ep)
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return ref
}

func lookup(t testing.TB, env *actor.Env, addr actor.RpcAddress, name string) *actor.Ref {
	t.Helper()
	ref, err := env.SetupEndpointRef(testutil.Context(t, waitFor), addr, name)
	if err != nil {
		t.Fatalf("lookup %s at %s: %v", name, addr, err)
	}
	return ref
}

func askString(t testing.TB, ref *actor.Ref, s string) string {
	t.Helper()
	r, err := actor.AskAs[*wrapperspb.StringValue](testutil.Context(t, waitFor), ref, str(s))
	if err != nil {
		t.Fatalf("ask %q: %v", s, err)
	}
	return r.GetValue()
}

// events records network events.
type events struct {
	mu  sync.Mutex
	evs []event
	ch  chan event
}

type event struct {
	kind string // connected, disconnected, error, stop
	addr actor.RpcAddress
}

func newEvents() *events { return &events{ch: make(chan event, 100)} }

func (e *events) add(ev event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
	e.ch <- ev
}

func (e *events) Receive(*actor.Context, proto.Message) error { return nil }
func (e *events) OnConnected(_ *actor.Context, a actor.RpcAddress) error {
	e.add(event{"connected", a})
	return nil
}
func (e *events) OnDisconnected(_ *actor.Context, a actor.RpcAddress) error {
	e.add(event{"disconnected", a})
	return nil
}
func (e *events) OnNetworkError(_ *actor.Context, _ error, a actor.RpcAddress) error {
	e.add(event{"error", a})
	return nil
}
func (e *events) OnStop(*actor.Context) error {
	e.add(event{kind: "stop"})
	return nil
}

func (e *events) wait(t testing.TB, kind string, addr *actor.RpcAddress) event {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case ev := <-e.ch:
			if ev.kind == kind && (addr == nil || ev.addr == *addr) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event (address %v)", kind, addr)
		}
	}
}

func (e *events) all() []event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]event(nil), e.evs...)
}
