package endpoints

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The size bound holds only for singular scalar, string and bytes fields,
// and counts the string and bytes fields by name: a field added to
// LaunchTask or StatusUpdate must be counted there too, or this fails.
func TestSizeBoundCoversEveryField(t *testing.T) {
	tests := []struct {
		msg     proto.Message
		counted []string // the string and bytes fields the bound adds up
	}{
		{&messages.LaunchTask{}, []string{"payload", "task_name"}},
		{&messages.StatusUpdate{}, []string{"error", "executor_id", "result"}},
	}
	for _, tc := range tests {
		d := tc.msg.ProtoReflect().Descriptor()
		var strs []string
		for i := range d.Fields().Len() {
			f := d.Fields().Get(i)
			switch {
			case f.Cardinality() == protoreflect.Repeated, f.Kind() == protoreflect.MessageKind, f.Kind() == protoreflect.GroupKind:
				t.Errorf("%s.%s is a %v %v field: the bound does not hold for it", d.Name(), f.Name(), f.Cardinality(), f.Kind())
			case f.Kind() == protoreflect.StringKind, f.Kind() == protoreflect.BytesKind:
				strs = append(strs, string(f.Name()))
			}
		}
		slices.Sort(strs)
		if !slices.Equal(strs, tc.counted) {
			t.Errorf("%s has the string and bytes fields %v; the bound counts %v", d.Name(), strs, tc.counted)
		}
	}
}

// The bound never says "fits" of a message that reaches the limit, and the
// decision is the exact one around the message's size, with the widest
// varints (negative int32s take 10 bytes).
func TestTooLargeDecidesAsTheExactSize(t *testing.T) {
	big := strings.Repeat("x", 300)
	launches := []*messages.LaunchTask{
		{},
		{TaskId: 1, TaskName: "t", Payload: []byte{1}, Cpus: 1},
		{TaskId: math.MaxInt64, Attempt: -1, Partition: math.MinInt32, TaskName: big, Payload: []byte(big), JobId: -1, Cpus: -1},
	}
	for _, m := range launches {
		size := proto.Size(m)
		if bound := launchTaskOverhead + len(m.TaskName) + len(m.Payload); size > bound {
			t.Errorf("LaunchTask %v: size %d over the bound %d", m, size, bound)
		}
		for _, limit := range []int{size - 1, size, size + 1} {
			got, tooLarge := launchTaskTooLarge(m, limit)
			if tooLarge != (size >= limit) || (tooLarge && got != size) {
				t.Errorf("LaunchTask of %d bytes, limit %d: %d, %v", size, limit, got, tooLarge)
			}
		}
	}
	updates := []*messages.StatusUpdate{
		{},
		{ExecutorId: "1", TaskId: 1, State: messages.TaskState_TASK_STATE_FINISHED, Result: []byte{1}, TaskCpus: 1},
		{ExecutorId: big, TaskId: math.MinInt64, State: messages.TaskState(-1), Result: []byte(big), Error: big, TaskCpus: -1},
	}
	for _, u := range updates {
		size := proto.Size(u)
		if bound := statusUpdateOverhead + len(u.ExecutorId) + len(u.Result) + len(u.Error); size > bound {
			t.Errorf("StatusUpdate %v: size %d over the bound %d", u, size, bound)
		}
		for _, limit := range []int{size - 1, size, size + 1} {
			got, tooLarge := statusUpdateTooLarge(u, limit)
			if tooLarge != (size >= limit) || (tooLarge && got != size) {
				t.Errorf("StatusUpdate of %d bytes, limit %d: %d, %v", size, limit, got, tooLarge)
			}
		}
	}
}
