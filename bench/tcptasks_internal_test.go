package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sparkrpc/sparkrpc/messages"
)

const (
	running  = messages.TaskState_TASK_STATE_RUNNING
	finished = messages.TaskState_TASK_STATE_FINISHED
)

// A task frame written by the raw TCP baseline reads back, in place, as
// what was written, and has the size of the LaunchTask and StatusUpdate
// it stands for.
func TestTaskFramesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	fw := &frameWriter{w: bufio.NewWriter(&buf)}
	payload := binary.BigEndian.AppendUint64(nil, 42)
	if err := fw.writeLaunch(43, 42, payload); err != nil {
		t.Fatal(err)
	}
	if err := fw.writeStatus("3", 43, running, nil); err != nil {
		t.Fatal(err)
	}
	if err := fw.writeStatus("3", 43, finished, payload); err != nil {
		t.Fatal(err)
	}
	if err := fw.w.Flush(); err != nil {
		t.Fatal(err)
	}
	fr := &frameReader{r: bufio.NewReader(&buf)}
	tests := []struct {
		name              string
		idField, bytesFld protowire.Number
		wantState         messages.TaskState
		wantData          []byte
		minSize, maxSize  int
	}{
		{"launch", 1, 5, 0, payload, 50, 70},
		{"running", 2, 4, running, nil, 30, 60},
		{"finished", 2, 4, finished, payload, 40, 60},
	}
	for _, tc := range tests {
		b, err := fr.read()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := len(b) + 4; n < tc.minSize || n > tc.maxSize {
			t.Errorf("%s: frame of %d bytes, want %d to %d", tc.name, n, tc.minSize, tc.maxSize)
		}
		id, state, data, err := decodeTaskFrame(b, tc.idField, tc.bytesFld)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if id != 43 || state != tc.wantState || !bytes.Equal(data, tc.wantData) {
			t.Errorf("%s: id %d, state %v, data %x; want 43, %v, %x", tc.name, id, state, data, tc.wantState, tc.wantData)
		}
	}
}

// The job of the raw TCP baseline counts a task as received once its
// FINISHED with its payload arrived after its RUNNING, and every other
// sequence as a failure.
func TestTCPTaskJobVerification(t *testing.T) {
	type update struct {
		id     int64
		state  messages.TaskState
		result []byte
	}
	p := func(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }
	tests := []struct {
		name    string
		updates []update
		wantEnd []bool
		want    Verification
	}{
		{"both tasks", []update{{1, running, nil}, {2, running, nil}, {2, finished, p(1)}, {1, finished, p(0)}},
			[]bool{false, false, true, true}, Verification{Sent: 2, Received: 2, OK: true}},
		{"finished before running", []update{{1, finished, p(0)}, {2, running, nil}, {2, finished, p(1)}},
			[]bool{true, false, true}, Verification{Sent: 2, Received: 2, Reordered: 1}},
		{"wrong result", []update{{1, running, nil}, {1, finished, p(9)}, {2, running, nil}, {2, finished, p(1)}},
			[]bool{false, true, false, true}, Verification{Sent: 2, Received: 1, Unknown: 1}},
		{"unknown task", []update{{3, running, nil}, {1, running, nil}, {1, finished, p(0)}, {2, running, nil}, {2, finished, p(1)}},
			[]bool{false, false, true, false, true}, Verification{Sent: 2, Received: 2, Unknown: 1}},
		{"duplicate", []update{{1, running, nil}, {1, finished, p(0)}, {1, finished, p(0)}, {2, running, nil}, {2, finished, p(1)}},
			[]bool{false, true, false, false, true}, Verification{Sent: 2, Received: 2, Duplicates: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := newTCPTaskJob(2)
			for i, u := range tc.updates {
				if got := j.status(u.id, u.state, u.result); got != tc.wantEnd[i] {
					t.Fatalf("update %d (%+v) ended a task: %v, want %v", i, u, got, tc.wantEnd[i])
				}
			}
			select {
			case <-j.done:
			default:
				t.Fatal("the job is not done after both tasks finished")
			}
			got := j.verification()
			if got != tc.want {
				t.Fatalf("verification %+v, want %+v", got, tc.want)
			}
		})
	}
}
