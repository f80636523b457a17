package endpoints

import (
	"math"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// The check never says "fits" of a message that, with the room kept for its
// envelope, reaches the limit, and the decision is the exact one around the
// message's size, with the widest varints (negative int32s take 10 bytes).
func TestTooLargeDecidesAsTheExactSize(t *testing.T) {
	big := strings.Repeat("x", 300)
	launches := []*messages.LaunchTask{
		{},
		{TaskId: 1, TaskName: "t", Payload: []byte{1}, Cpus: 1},
		{TaskId: math.MaxInt64, Attempt: -1, Partition: math.MinInt32, TaskName: big, Payload: []byte(big), JobId: -1, Cpus: -1},
	}
	for _, m := range launches {
		size := proto.Size(m)
		for _, limit := range []int{size - 1 + envelopeRoom, size + envelopeRoom, size + 1 + envelopeRoom} {
			got, over := tooLarge(m, limit)
			if over != (size+envelopeRoom >= limit) || (over && got != size) {
				t.Errorf("LaunchTask of %d bytes, limit %d: %d, %v", size, limit, got, over)
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
		for _, limit := range []int{size - 1 + envelopeRoom, size + envelopeRoom, size + 1 + envelopeRoom} {
			got, over := tooLarge(u, limit)
			if over != (size+envelopeRoom >= limit) || (over && got != size) {
				t.Errorf("StatusUpdate of %d bytes, limit %d: %d, %v", size, limit, got, over)
			}
		}
	}
}
