package actor_test

// The same endpoint written twice: with a Router (typed handlers) and as a
// full Endpoint with type switches.

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// tally adds the numbers sent to it and answers an Empty ask with the total.
// It embeds a Router for its messages and keeps a lifecycle hook of its own.
type tally struct {
	*actor.Router
	total int64
}

func newTally() *tally {
	t := &tally{Router: actor.NewRouter()}
	actor.Handle(t.Router, t.add)
	actor.HandleAsk(t.Router, t.sum)
	return t
}

func (t *tally) add(_ *actor.Context, m *wrapperspb.Int64Value) error {
	t.total += m.GetValue()
	return nil
}

func (t *tally) sum(*actor.CallContext, *emptypb.Empty) (*wrapperspb.Int64Value, error) {
	return wrapperspb.Int64(t.total), nil
}

func (t *tally) OnStop(*actor.Context) error {
	fmt.Println("stopped at", t.total)
	return nil
}

func ExampleRouter() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())
	ref, _ := env.RegisterEndpoint("tally", newTally())

	for i := int64(1); i <= 3; i++ {
		_ = ref.Send(wrapperspb.Int64(i))
	}
	ctx := context.Background()
	total, err := actor.AskAs[*wrapperspb.Int64Value](ctx, ref, &emptypb.Empty{})
	fmt.Println(total.GetValue(), err)

	// A type without a handler of the right kind is unsupported: here an
	// Int64Value has a one-way handler but no ask handler.
	_, err = ref.AskSync(ctx, wrapperspb.Int64(4))
	fmt.Println(errors.Is(err, actor.ErrUnsupportedMessage))
	// Output:
	// 6 <nil>
	// true
	// stopped at 6
}

// switchTally is tally written as a full Endpoint: one type switch per kind
// of message, each with the "unsupported" default.
type switchTally struct{ total int64 }

func (t *switchTally) Receive(_ *actor.Context, msg proto.Message) error {
	switch m := msg.(type) {
	case *wrapperspb.Int64Value:
		t.total += m.GetValue()
		return nil
	default:
		return actor.ErrUnsupportedMessage
	}
}

func (t *switchTally) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch msg.(type) {
	case *emptypb.Empty:
		ctx.Reply(wrapperspb.Int64(t.total))
		return nil
	default:
		return actor.ErrUnsupportedMessage
	}
}

func (t *switchTally) OnStop(*actor.Context) error {
	fmt.Println("stopped at", t.total)
	return nil
}

func ExampleEndpoint() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())
	ref, _ := env.RegisterEndpoint("tally", &switchTally{})

	for i := int64(1); i <= 3; i++ {
		_ = ref.Send(wrapperspb.Int64(i))
	}
	ctx := context.Background()
	total, err := actor.AskAs[*wrapperspb.Int64Value](ctx, ref, &emptypb.Empty{})
	fmt.Println(total.GetValue(), err)
	_, err = ref.AskSync(ctx, wrapperspb.Int64(4))
	fmt.Println(errors.Is(err, actor.ErrUnsupportedMessage))
	// Output:
	// 6 <nil>
	// true
	// stopped at 6
}

func ExampleHandleAsk() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())

	// A Router needs no type of its own: register functions and the Router.
	r := actor.NewRouter()
	actor.HandleAsk(r, func(_ *actor.CallContext, name *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if name.GetValue() == "" {
			return nil, errors.New("no name") // fails the asker
		}
		return wrapperspb.String("Hello, " + name.GetValue()), nil
	})
	ref, _ := env.RegisterEndpoint("greeter", r)

	ctx := context.Background()
	greeting, err := actor.AskAs[*wrapperspb.StringValue](ctx, ref, wrapperspb.String("Spark"))
	fmt.Println(greeting.GetValue(), err)
	_, err = ref.AskSync(ctx, wrapperspb.String(""))
	fmt.Println(err)
	// Output:
	// Hello, Spark <nil>
	// no name
}
