package netty

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The generated types whose checked fields are all plain strings are
// checked without protobuf reflection, on both the encoding and the
// decoding side; the others keep their plan.
func TestFieldCheckIsPlannedForPlainStrings(t *testing.T) {
	for _, tc := range []struct {
		msg     proto.Message
		strings int // -1: no fieldCheck
	}{
		{&messages.StatusUpdate{}, 2},
		{&messages.LaunchTask{}, 1},
		{&messages.RpcFailure{}, 5},
		{&messages.RegisterExecutor{}, -1},   // a map of strings
		{&messages.AmAllocate{}, -1},         // a list of strings
		{&messages.AmAllocateResponse{}, -1}, // nested messages
		{wrapperspb.String(""), -1},          // no vtprotobuf methods
	} {
		name := tc.msg.ProtoReflect().Descriptor().FullName()
		mt, err := findMessageType([]byte(name))
		if err != nil {
			t.Fatal(err)
		}
		for side, c := range map[string]*fieldCheck{"encode": encodeInfoOf(tc.msg).fields, "decode": mt.fields} {
			switch {
			case tc.strings < 0 && c != nil:
				t.Errorf("%s (%s): fieldCheck %+v, want the plan", name, side, c)
			case tc.strings >= 0 && (c == nil || len(c.strings) != tc.strings):
				t.Errorf("%s (%s): fieldCheck %+v, want %d strings", name, side, c, tc.strings)
			}
		}
	}
}

// A fieldCheck finds what the plan finds: invalid UTF-8 in any of the
// strings, malformed unknown fields, and nothing in a valid message.
func TestFieldCheckAgreesWithThePlan(t *testing.T) {
	bad := "\xff\xfe"
	withUnknown := func(m proto.Message, u []byte) proto.Message {
		m.ProtoReflect().SetUnknown(u)
		return m
	}
	for _, msg := range []proto.Message{
		&messages.StatusUpdate{ExecutorId: "1", TaskId: 2, Error: "é"},
		&messages.StatusUpdate{ExecutorId: bad},
		&messages.StatusUpdate{ExecutorId: "1", Error: bad},
		&messages.LaunchTask{TaskName: bad, Payload: []byte("\xff")},
		&messages.LaunchTask{TaskName: "noop", Payload: []byte("\xff")},
		&messages.LaunchTask{TaskName: "noop", AddedFiles: map[string]int64{"spark://h:1/files/a": 1}},
		&messages.LaunchTask{TaskName: "noop", AddedFiles: map[string]int64{"spark://h:1/files/a": 1, bad: 2}},
		&messages.RpcFailure{Message: "m", Type: "t", Cause: bad},
		withUnknown(&messages.StatusUpdate{ExecutorId: "1"}, []byte{0x7a, 1, 'x'}), // field 15, well formed
		withUnknown(&messages.StatusUpdate{ExecutorId: "1"}, []byte{0x7b}),         // a group that never ends
		(*messages.StatusUpdate)(nil),
	} {
		name := msg.ProtoReflect().Descriptor().FullName()
		info := encodeInfoOf(msg)
		want := info.plan.check(msg.ProtoReflect())
		if got := info.fields.check(msg); !errors.Is(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%s %v: fieldCheck %v, plan %v", name, msg, got, want)
		}
	}
}

// A frame whose string is not valid UTF-8 is refused when it is decoded, as
// protobuf-go refuses it, for the types a fieldCheck checks.
func TestFieldCheckRefusesInvalidUTF8OnDecode(t *testing.T) {
	mt, err := findMessageType([]byte("sparkrpc.messages.StatusUpdate"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(&messages.StatusUpdate{ExecutorId: "1", Error: "!!"})
	if err != nil {
		t.Fatal(err)
	}
	b = corrupt(t, b, "\xff\xfe")
	if got, err := mt.decode(b); !errors.Is(err, errInvalidUTF8) {
		t.Errorf("decode = %v, %v; want %v", got, err, errInvalidUTF8)
	}
	var plain messages.StatusUpdate
	if err := proto.Unmarshal(b, &plain); err == nil {
		t.Errorf("protobuf-go decoded the frame: %v", &plain)
	}
}
