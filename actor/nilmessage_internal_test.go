package actor

import (
	"reflect"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// embeddedPing is a user's struct that embeds a generated message.
type embeddedPing struct{ *messages.BenchPing }

// A Ref that last sent a generated type checks that type's messages by
// their pointer alone, and every other message as isNilMessage does.
func TestRefIsNilKeepsWhatIsNoMessage(t *testing.T) {
	if !generatedType(reflect.TypeOf(&messages.BenchPing{})) || generatedType(reflect.TypeOf(&embeddedPing{})) {
		t.Fatal("generatedType: BenchPing is generated, a struct embedding it is not")
	}
	r := &Ref{}
	r.sentTo.Store(&msgCounter{typ: reflect.TypeOf(&messages.BenchPing{}), generated: true})
	for name, c := range map[string]struct {
		msg    any
		nilMsg bool
	}{
		"typed nil of the type sent last":  {(*messages.BenchPing)(nil), true},
		"a message of the type sent last":  {&messages.BenchPing{}, false},
		"a struct embedding a nil message": {&embeddedPing{}, true},
		"a struct embedding a message":     {&embeddedPing{&messages.BenchPing{}}, false},
		"typed nil of another type":        {(*wrapperspb.StringValue)(nil), true},
		"a message of another type":        {wrapperspb.String("x"), false},
	} {
		var got bool
		switch m := c.msg.(type) {
		case *messages.BenchPing:
			got = r.isNil(m)
		case *embeddedPing:
			got = r.isNil(m)
		case *wrapperspb.StringValue:
			got = r.isNil(m)
		}
		if got != c.nilMsg {
			t.Errorf("%s: isNil = %v, want %v", name, got, c.nilMsg)
		}
	}
	if !r.isNil(nil) {
		t.Error("isNil(nil) = false")
	}
}
