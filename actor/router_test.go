package actor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// routed is an endpoint built on a Router that reports the errors of its
// handlers on a channel.
type routed struct {
	*actor.Router
	errs chan error
}

func newRouted() *routed { return &routed{Router: actor.NewRouter(), errs: make(chan error, 16)} }

func (e *routed) OnError(_ *actor.Context, err error) { e.errs <- err }

func TestRouterRoutesEachKind(t *testing.T) {
	env := newEnv(t, nil)
	r := actor.NewRouter()
	got := make(chan string, 4)
	actor.Handle(r, func(ctx *actor.Context, m *wrapperspb.StringValue) error {
		got <- ctx.Name() + " received string " + m.GetValue()
		return nil
	})
	actor.Handle(r, func(ctx *actor.Context, m *wrapperspb.Int64Value) error {
		got <- fmt.Sprint(ctx.Name(), " received int ", m.GetValue())
		return nil
	})
	// The same types also have ask handlers, and a reply may be of another type.
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		return str(ctx.Name() + " answered string " + m.GetValue()), nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *wrapperspb.Int64Value) (*wrapperspb.StringValue, error) {
		return str(fmt.Sprint(ctx.Name(), " answered int ", m.GetValue())), nil
	})
	ref := register(t, env, "router", r)

	if err := ref.Send(str("a")); err != nil {
		t.Fatal(err)
	}
	if v, want := testutil.Recv(t, got, testTimeout, "string message"), "router received string a"; v != want {
		t.Errorf("Send(string) handled as %q, want %q", v, want)
	}
	if err := ref.Send(wrapperspb.Int64(1)); err != nil {
		t.Fatal(err)
	}
	if v, want := testutil.Recv(t, got, testTimeout, "int message"), "router received int 1"; v != want {
		t.Errorf("Send(int) handled as %q, want %q", v, want)
	}
	if v, want := askString(t, ref, "b"), "router answered string b"; v != want {
		t.Errorf("ask(string) = %q, want %q", v, want)
	}
	v, err := actor.AskAs[*wrapperspb.StringValue](testutil.Context(t, testTimeout), ref, wrapperspb.Int64(2))
	if err != nil || v.GetValue() != "router answered int 2" {
		t.Errorf("ask(int) = %q, %v; want %q", v.GetValue(), err, "router answered int 2")
	}
	if len(got) != 0 {
		t.Errorf("an ask reached a one-way handler: %q", <-got)
	}
}

// A Router answers a message without a handler of the right kind with the
// bare ErrUnsupportedMessage, which the env turns into Spark's failure.
func TestRouterReturnsErrUnsupportedMessage(t *testing.T) {
	var r actor.Router // the zero Router is ready to use
	if err := r.Receive(nil, str("x")); err != actor.ErrUnsupportedMessage {
		t.Errorf("empty Router: Receive = %v, want ErrUnsupportedMessage", err)
	}
	if err := r.ReceiveAndReply(nil, str("x")); err != actor.ErrUnsupportedMessage {
		t.Errorf("empty Router: ReceiveAndReply = %v, want ErrUnsupportedMessage", err)
	}
	actor.Handle(&r, func(*actor.Context, *wrapperspb.StringValue) error { return nil })
	actor.HandleAsk(&r, func(_ *actor.CallContext, m *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) { return m, nil })
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Receive of another type", func() error { return r.Receive(nil, wrapperspb.Bool(true)) }},
		{"Receive of an ask-only type", func() error { return r.Receive(nil, wrapperspb.Int64(1)) }},
		{"ReceiveAndReply of another type", func() error { return r.ReceiveAndReply(nil, wrapperspb.Bool(true)) }},
		{"ReceiveAndReply of a one-way-only type", func() error { return r.ReceiveAndReply(nil, str("x")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != actor.ErrUnsupportedMessage {
				t.Errorf("got %v, want ErrUnsupportedMessage", err)
			}
		})
	}
	if err := r.Receive(nil, str("x")); err != nil {
		t.Errorf("Receive of a handled type = %v", err)
	}
}

// Over a real env, locally and from another env, an unsupported message goes
// to OnError, and fails an asker with "Unsupported message TYPE from ADDR".
func TestRouterUnsupportedMessage(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := newRouted()
	actor.Handle(ep.Router, func(*actor.Context, *wrapperspb.StringValue) error { return nil })
	actor.HandleAsk(ep.Router, func(_ *actor.CallContext, m *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) { return m, nil })
	local := register(t, server, "router", ep)
	remote := setupRef(t, client, server, "router")

	for _, tc := range []struct {
		name string
		msg  proto.Message
		typ  string
	}{
		{"another type", wrapperspb.Bool(true), "google.protobuf.BoolValue"},
		{"one-way only", str("x"), "google.protobuf.StringValue"},
	} {
		for _, at := range []struct {
			name string
			ref  *actor.Ref
		}{{"local", local}, {"remote", remote}} {
			t.Run("ask "+tc.name+" "+at.name, func(t *testing.T) {
				_, err := at.ref.AskSync(testutil.Context(t, testTimeout), tc.msg)
				if !errors.Is(err, actor.ErrUnsupportedMessage) || !strings.HasPrefix(err.Error(), "Unsupported message "+tc.typ+" from ") {
					t.Errorf("asker got %v, want Unsupported message %s from ...", err, tc.typ)
				}
				if err := testutil.Recv(t, ep.errs, testTimeout, "OnError"); !errors.Is(err, actor.ErrUnsupportedMessage) {
					t.Errorf("OnError got %v, want ErrUnsupportedMessage", err)
				}
			})
		}
	}
	for _, tc := range []struct {
		name string
		msg  proto.Message
		typ  string
	}{
		{"another type", wrapperspb.Bool(true), "google.protobuf.BoolValue"},
		{"ask only", wrapperspb.Int64(1), "google.protobuf.Int64Value"},
	} {
		t.Run("send "+tc.name, func(t *testing.T) {
			if err := remote.Send(tc.msg); err != nil {
				t.Fatal(err)
			}
			err := testutil.Recv(t, ep.errs, testTimeout, "OnError")
			var ue *actor.UnsupportedMessageError
			if !errors.As(err, &ue) || ue.Type != tc.typ {
				t.Errorf("OnError got %v, want an *UnsupportedMessageError for %s", err, tc.typ)
			}
		})
	}
}

func TestRouterRegistrationPanics(t *testing.T) {
	noop := func(*actor.Context, *wrapperspb.StringValue) error { return nil }
	echo := func(_ *actor.CallContext, m *wrapperspb.StringValue) (*wrapperspb.StringValue, error) { return m, nil }
	for _, tc := range []struct {
		name     string
		register func(r *actor.Router)
		panic    string // "" when the registration is valid
	}{
		{"one-way twice", func(r *actor.Router) { actor.Handle(r, noop); actor.Handle(r, noop) },
			"actor: Handle: a one-way handler for *wrapperspb.StringValue is already registered"},
		{"ask twice", func(r *actor.Router) { actor.HandleAsk(r, echo); actor.HandleAsk(r, echo) },
			"actor: HandleAsk: an ask handler for *wrapperspb.StringValue is already registered"},
		{"one-way and ask of one type", func(r *actor.Router) { actor.Handle(r, noop); actor.HandleAsk(r, echo) }, ""},
		{"interface type", func(r *actor.Router) {
			actor.Handle(r, func(*actor.Context, proto.Message) error { return nil })
		}, "actor: Handle: protoreflect.ProtoMessage is an interface"},
		{"nil handler", func(r *actor.Router) { actor.HandleAsk[*wrapperspb.StringValue, *wrapperspb.StringValue](r, nil) },
			"actor: HandleAsk: nil handler for *wrapperspb.StringValue"},
		{"nil router", func(*actor.Router) { actor.Handle(nil, noop) }, "actor: Handle: nil Router"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			func() {
				defer func() {
					if p := recover(); p != nil {
						got = fmt.Sprint(p)
					}
				}()
				tc.register(actor.NewRouter())
			}()
			if tc.panic == "" && got != "" || !strings.HasPrefix(got, tc.panic) {
				t.Errorf("panic = %q, want %q", got, tc.panic)
			}
		})
	}
}

var errBoom = errors.New("boom")

// A handler's error, or panic, goes to OnError and fails the asker with it.
func TestRouterHandlerError(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := newRouted()
	actor.Handle(ep.Router, func(*actor.Context, *wrapperspb.StringValue) error { return errBoom })
	actor.HandleAsk(ep.Router, func(*actor.CallContext, *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		return nil, errBoom
	})
	actor.HandleAsk(ep.Router, func(*actor.CallContext, *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) {
		panic("kaput")
	})
	local := register(t, server, "router", ep)
	remote := setupRef(t, client, server, "router")

	t.Run("one-way", func(t *testing.T) {
		if err := local.Send(str("x")); err != nil {
			t.Fatal(err)
		}
		if err := testutil.Recv(t, ep.errs, testTimeout, "OnError"); !errors.Is(err, errBoom) {
			t.Errorf("OnError got %v, want %v", err, errBoom)
		}
	})
	t.Run("ask local", func(t *testing.T) {
		if _, err := local.AskSync(testutil.Context(t, testTimeout), str("x")); !errors.Is(err, errBoom) {
			t.Errorf("asker got %v, want %v", err, errBoom)
		}
		if err := testutil.Recv(t, ep.errs, testTimeout, "OnError"); !errors.Is(err, errBoom) {
			t.Errorf("OnError got %v, want %v", err, errBoom)
		}
	})
	t.Run("ask remote", func(t *testing.T) {
		_, err := remote.AskSync(testutil.Context(t, testTimeout), str("x"))
		var re *actor.RemoteError
		if !errors.As(err, &re) || re.Message != "boom" {
			t.Errorf("asker got %v, want a *RemoteError %q", err, "boom")
		}
		if err := testutil.Recv(t, ep.errs, testTimeout, "OnError"); !errors.Is(err, errBoom) {
			t.Errorf("OnError got %v, want %v", err, errBoom)
		}
	})
	t.Run("panic", func(t *testing.T) {
		_, err := local.AskSync(testutil.Context(t, testTimeout), wrapperspb.Int64(1))
		var pe *actor.PanicError
		if !errors.As(err, &pe) || pe.Value != "kaput" {
			t.Errorf("asker got %v, want a *PanicError kaput", err)
		}
		if err := testutil.Recv(t, ep.errs, testTimeout, "OnError"); !errors.As(err, &pe) {
			t.Errorf("OnError got %v, want a *PanicError", err)
		}
	})
}

// An ask handler that returns a nil response and no error fails the asker
// with ErrNilMessage instead of leaving it waiting for its timeout.
func TestRouterNilResponse(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	ep := newRouted()
	actor.HandleAsk(ep.Router, func(*actor.CallContext, *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		return nil, nil // a typed nil
	})
	actor.HandleAsk(ep.Router, func(*actor.CallContext, *wrapperspb.Int64Value) (proto.Message, error) {
		return nil, nil // an untyped nil
	})
	local := register(t, server, "router", ep)
	remote := setupRef(t, client, server, "router")

	for _, tc := range []struct {
		name string
		msg  proto.Message
		want string
	}{
		{"typed nil", str("x"), "Message is null: the ask handler for *wrapperspb.StringValue returned a nil *wrapperspb.StringValue and no error"},
		{"untyped nil", wrapperspb.Int64(1), "Message is null: the ask handler for *wrapperspb.Int64Value returned a nil protoreflect.ProtoMessage and no error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := local.AskSync(testutil.Context(t, testTimeout), tc.msg)
			if !errors.Is(err, actor.ErrNilMessage) || err.Error() != tc.want {
				t.Errorf("local asker got %v, want ErrNilMessage %q", err, tc.want)
			}
			if err := testutil.Recv(t, ep.errs, testTimeout, "OnError"); !errors.Is(err, actor.ErrNilMessage) {
				t.Errorf("OnError got %v, want ErrNilMessage", err)
			}
			_, err = remote.AskSync(testutil.Context(t, testTimeout), tc.msg)
			var re *actor.RemoteError
			if !errors.As(err, &re) || re.Message != tc.want {
				t.Errorf("remote asker got %v, want a *RemoteError %q", err, tc.want)
			}
			testutil.Recv(t, ep.errs, testTimeout, "OnError")
		})
	}
}

// hooked embeds a Router by value, registers its handlers in OnStart and
// keeps its other hooks.
type hooked struct {
	actor.Router
	events chan string
}

func (h *hooked) OnStart(ctx *actor.Context) error {
	actor.Handle(&h.Router, func(_ *actor.Context, m *wrapperspb.StringValue) error {
		h.events <- "receive " + m.GetValue()
		return nil
	})
	h.events <- "start " + ctx.Name()
	return nil
}

func (h *hooked) OnStop(*actor.Context) error {
	h.events <- "stop"
	return nil
}

func TestRouterEmbeddedWithHooks(t *testing.T) {
	env := newEnv(t, nil)
	h := &hooked{events: make(chan string, 3)}
	ref := register(t, env, "hooked", h)
	if err := ref.Send(str("x")); err != nil {
		t.Fatal(err)
	}
	if err := env.Stop(ref); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"start hooked", "receive x", "stop"} {
		if got := testutil.Recv(t, h.events, testTimeout, want); got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	}
}

// The endpoint-verifier is a Router: it answers CheckExistence and nothing else.
func TestRouterVerifier(t *testing.T) {
	n := actor.NewMemNetwork()
	server := serverEnv(t, n, "host1", 1)
	client := clientEnv(t, n)
	register(t, server, "present", &testEndpoint{})
	verifier := setupRef(t, client, server, actor.VerifierName)
	for _, name := range []string{"present", "absent"} {
		res, err := actor.AskAs[*messages.CheckExistenceResponse](testutil.Context(t, testTimeout), verifier, &messages.CheckExistence{Name: name})
		if err != nil || res.GetExists() != (name == "present") {
			t.Errorf("CheckExistence(%s) = %v, %v", name, res, err)
		}
	}
	if _, err := verifier.AskSync(testutil.Context(t, testTimeout), str("x")); !errors.Is(err, actor.ErrUnsupportedMessage) {
		t.Errorf("ask of another type = %v, want ErrUnsupportedMessage", err)
	}
}

// BenchmarkRouter compares a Router's dispatch with the type switch it
// replaces, over twelve message types: the message is the switch's first or
// its last case, or none of them. The ask cases go through a local env.
//
//	go test -run XXX -bench Router -benchmem ./actor/
func BenchmarkRouter(b *testing.B) {
	var n int
	r := actor.NewRouter()
	count[*wrapperspb.BoolValue](r, &n)
	count[*wrapperspb.BytesValue](r, &n)
	count[*wrapperspb.DoubleValue](r, &n)
	count[*wrapperspb.FloatValue](r, &n)
	count[*wrapperspb.Int32Value](r, &n)
	count[*wrapperspb.Int64Value](r, &n)
	count[*wrapperspb.UInt32Value](r, &n)
	count[*wrapperspb.UInt64Value](r, &n)
	count[*emptypb.Empty](r, &n)
	count[*durationpb.Duration](r, &n)
	count[*timestamppb.Timestamp](r, &n)
	count[*wrapperspb.StringValue](r, &n)
	sw := &typeSwitch{}
	for _, tc := range []struct {
		name string
		msg  proto.Message
	}{
		{"first", wrapperspb.Bool(true)},
		{"last", str("x")},
		{"unsupported", &messages.CheckExistence{}},
	} {
		b.Run("router/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Receive(nil, tc.msg)
			}
		})
		b.Run("switch/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = sw.Receive(nil, tc.msg)
			}
		})
	}

	env := benchEnv(b)
	defer stopBenchEnv(b, env)
	actor.HandleAsk(r, func(_ *actor.CallContext, m *wrapperspb.StringValue) (*wrapperspb.StringValue, error) { return m, nil })
	for _, ep := range []struct {
		name string
		ep   actor.Endpoint
	}{{"router", r}, {"switch", sw}} {
		ref, err := env.RegisterEndpoint(ep.name, ep.ep)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("ask/"+ep.name, func(b *testing.B) {
			ctx := context.Background()
			msg := str("x")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ref.AskSync(ctx, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// count registers a one-way handler for T that counts into n.
func count[T proto.Message](r *actor.Router, n *int) {
	actor.Handle(r, func(*actor.Context, T) error { *n++; return nil })
}

// typeSwitch is the hand-written endpoint that BenchmarkRouter compares a
// Router with.
type typeSwitch struct{ n int }

func (s *typeSwitch) Receive(_ *actor.Context, msg proto.Message) error {
	switch msg.(type) {
	case *wrapperspb.BoolValue:
		s.n++
	case *wrapperspb.BytesValue:
		s.n++
	case *wrapperspb.DoubleValue:
		s.n++
	case *wrapperspb.FloatValue:
		s.n++
	case *wrapperspb.Int32Value:
		s.n++
	case *wrapperspb.Int64Value:
		s.n++
	case *wrapperspb.UInt32Value:
		s.n++
	case *wrapperspb.UInt64Value:
		s.n++
	case *emptypb.Empty:
		s.n++
	case *durationpb.Duration:
		s.n++
	case *timestamppb.Timestamp:
		s.n++
	case *wrapperspb.StringValue:
		s.n++
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (s *typeSwitch) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	m, ok := msg.(*wrapperspb.StringValue)
	if !ok {
		return actor.ErrUnsupportedMessage
	}
	ctx.Reply(m)
	return nil
}
