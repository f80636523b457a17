package actor_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
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
	if _, err := ref.AskSync(testContext(t), typedNil); !errors.Is(err, actor.ErrNilMessage) {
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
