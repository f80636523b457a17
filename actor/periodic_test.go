package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
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

func TestSendEveryTicksUntilStop(t *testing.T) {
	env := newEnv(t, nil)
	ep := &ticking{ticks: make(chan string, 1)}
	ref, err := env.RegisterEndpoint("ticking", ep)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case got := <-ep.ticks:
			if got != "tick" {
				t.Fatalf("got %q, want tick", got)
			}
		case <-time.After(testTimeout):
			t.Fatal("no periodic message")
		}
	}
	// Stopping the endpoint ends the ticker goroutine (the package's leak
	// check would report it otherwise).
	if err := env.Stop(ref); err != nil {
		t.Fatal(err)
	}
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
	if e := recv(t, errs, "SendEvery(0)"); !errors.Is(e, actor.ErrInvalidTimeout) {
		t.Errorf("zero interval: %v, want ErrInvalidTimeout", e)
	}
	if e := recv(t, errs, "SendEvery(nil)"); !errors.Is(e, actor.ErrNilMessage) {
		t.Errorf("nil message: %v, want ErrNilMessage", e)
	}
}
