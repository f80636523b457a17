package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A typed nil message is as much "no message" as an untyped nil: both are
// refused with ErrNilMessage, by Send and by Ask.
func TestTypedNilMessageIsRefused(t *testing.T) {
	env := newEnv(t, nil)
	ref := register(t, env, "echo", &testEndpoint{})
	var typedNil *wrapperspb.StringValue
	if err := ref.Send(typedNil); !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("Send(typed nil) = %v, want ErrNilMessage", err)
	}
	if _, err := ref.AskSync(testutil.Context(t, testTimeout), typedNil); !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("AskSync(typed nil) = %v, want ErrNilMessage", err)
	}
}

// A message that is not a nil pointer but is not valid either (dynamicpb's
// zero value of a type) is refused too; a valid dynamicpb message is not.
func TestInvalidDynamicMessageIsRefused(t *testing.T) {
	env := newEnv(t, nil)
	ref := register(t, env, "echo", &testEndpoint{})
	mt := dynamicpb.NewMessageType((&wrapperspb.StringValue{}).ProtoReflect().Descriptor())
	if err := ref.Send(mt.Zero().Interface()); !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("Send(an invalid dynamic message) = %v, want ErrNilMessage", err)
	}
	if err := ref.Send(mt.New().Interface()); err != nil {
		t.Errorf("Send(a valid dynamic message) = %v", err)
	}
}

// wrappedValue is a user's type that embeds a generated message: it has the
// message's methods, but its nil is not a nil pointer.
type wrappedValue struct{ *wrapperspb.StringValue }

// A value that wraps a nil message is no message either, by value or by
// pointer; one that wraps a message is.
func TestWrappedNilMessageIsRefused(t *testing.T) {
	env := newEnv(t, nil)
	ref := register(t, env, "echo", &testEndpoint{})
	if err := ref.Send(wrappedValue{}); !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("Send(a struct embedding a nil message) = %v, want ErrNilMessage", err)
	}
	if err := ref.Send(&wrappedValue{}); !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("Send(a pointer to a struct embedding a nil message) = %v, want ErrNilMessage", err)
	}
	if err := ref.Send(wrappedValue{wrapperspb.String("x")}); err != nil {
		t.Errorf("Send(a struct embedding a message) = %v", err)
	}
}

// delegatingMessage is a user's message type that hands ProtoReflect to the
// message it holds: its zero value has none to hand it to.
type delegatingMessage struct{ inner proto.Message }

func (d *delegatingMessage) ProtoReflect() protoreflect.Message { return d.inner.ProtoReflect() }

// The check asks nothing of a message's type but the message itself: a
// message whose type's zero value could not answer is taken.
func TestNilCheckAsksOnlyTheMessage(t *testing.T) {
	env := newEnv(t, nil)
	ref := register(t, env, "echo", &testEndpoint{})
	if err := ref.Send(&delegatingMessage{inner: wrapperspb.String("x")}); err != nil {
		t.Errorf("Send(a message that delegates to a valid one) = %v", err)
	}
}

// A reply of a typed nil ((*T)(nil), such as a lookup's miss) is no reply:
// the asker fails with ErrNilMessage, as Send and Ask refuse a typed nil.
// Before, a local asker got (*T)(nil) and no error, a remote one an empty T.
func TestReplyWithTypedNilFailsTheAsker(t *testing.T) {
	env := newEnv(t, nil)
	ref := register(t, env, "typednil", &testEndpoint{ask: func(ctx *actor.CallContext, _ proto.Message) error {
		var miss *wrapperspb.StringValue
		ctx.Reply(miss)
		return nil
	}})
	res, err := ref.AskSync(testutil.Context(t, 10*time.Second), str("x"))
	if !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("AskSync = (%#v, %v), want an error matching ErrNilMessage", res, err)
	}
}

// SendEvery refuses a typed nil at once, as Send does. Before, it returned
// no error and never sent anything.
func TestSendEveryRefusesTypedNil(t *testing.T) {
	env := newEnv(t, nil)
	got := make(chan error, 1)
	register(t, env, "every", &testEndpoint{start: func(ctx *actor.Context) error {
		stop, err := ctx.SendEvery(time.Millisecond, (*wrapperspb.StringValue)(nil))
		if stop != nil {
			stop()
		}
		got <- err
		return nil
	}})
	if err := <-got; !errors.Is(err, actor.ErrNilMessage) {
		t.Errorf("SendEvery((*T)(nil)) = %v, want ErrNilMessage", err)
	}
}
