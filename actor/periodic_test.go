package actor_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ticking starts a periodic self-send in OnStart and reports every tick.
type ticking struct {
	ticks chan string
	stop  func()
}

func (e *ticking) OnStart(ctx *actor.Context) error {
	stop, err := ctx.SendEvery(time.Millisecond, wrapperspb.String("tick"))
	e.stop = stop
	return err
}

func (e *ticking) Receive(_ *actor.Context, msg proto.Message) error {
	select {
	case e.ticks <- msg.(*wrapperspb.StringValue).GetValue():
	default:
	}
	return nil
}

// SendEvery ticks until it is stopped, by the function it returns or by the
// endpoint stopping; either way its goroutine ends.
func TestSendEveryTicksUntilStop(t *testing.T) {
	tests := []struct {
		name string
		stop func(t *testing.T, env *actor.Env, ref *actor.Ref, ep *ticking)
	}{
		{"stop function", func(_ *testing.T, _ *actor.Env, _ *actor.Ref, ep *ticking) { ep.stop() }},
		{"endpoint stops", func(t *testing.T, env *actor.Env, ref *actor.Ref, _ *ticking) {
			if err := env.Stop(ref); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, nil)
			ep := &ticking{ticks: make(chan string, 1)}
			ref, err := env.RegisterEndpoint("ticking", ep)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if got := testutil.Recv(t, ep.ticks, testTimeout, "a periodic message"); got != "tick" {
					t.Fatalf("got %q, want tick", got)
				}
			}
			if n := tickers(); n != 1 {
				t.Fatalf("%d SendEvery goroutines while ticking, want 1", n)
			}
			tt.stop(t, env, ref, ep)
			testutil.Eventually(t, testTimeout, "the SendEvery goroutine to end", func() bool { return tickers() == 0 })
		})
	}
}

// tickers counts the running goroutines that SendEvery started.
func tickers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "actor.(*Context).SendEvery") {
			count++
		}
	}
	return count
}

func TestSendEveryBadInput(t *testing.T) {
	env := newEnv(t, nil)
	errs := make(chan error, 2)
	register(t, env, "bad", &testEndpoint{start: func(ctx *actor.Context) error {
		_, e1 := ctx.SendEvery(0, wrapperspb.String("x"))
		_, e2 := ctx.SendEvery(time.Second, nil)
		errs <- e1
		errs <- e2
		return nil
	}})
	if e := testutil.Recv(t, errs, testTimeout, "SendEvery(0)"); !errors.Is(e, actor.ErrInvalidTimeout) {
		t.Errorf("zero interval: %v, want ErrInvalidTimeout", e)
	}
	if e := testutil.Recv(t, errs, testTimeout, "SendEvery(nil)"); !errors.Is(e, actor.ErrNilMessage) {
		t.Errorf("nil message: %v, want ErrNilMessage", e)
	}
}
