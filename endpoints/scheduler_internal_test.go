package endpoints

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
)

// A partition's result is taken once, even when two attempts of it run at
// once and both finish: the second result is ignored and does not count
// towards the job's end. (No path of the driver runs two attempts of one
// partition today; the scheduler must stay correct if one does, e.g. with
// speculation.)
func TestSchedulerTakesEachPartitionsResultOnce(t *testing.T) {
	s := newTaskScheduler(4, 1, 1<<20, 0)
	j := s.submit("t", [][]byte{[]byte("p0"), []byte("p1")}, nil)
	a := &executorData{id: "a", ready: true, freeCores: 1}
	b := &executorData{id: "b", ready: true, freeCores: 2}
	var out offerResult
	s.resourceOffers([]*executorData{a}, &out) // partition 0 on a
	j.requeue(0)                               // a second attempt of partition 0
	s.resourceOffers([]*executorData{b}, &out) // partition 1 and partition 0 again on b
	if len(out.launches) != 3 {
		t.Fatalf("%d launches, want 3", len(out.launches))
	}
	var first, second, other *messages.LaunchTask
	execOf := make(map[int64]string)
	for _, l := range out.launches {
		execOf[l.msg.TaskId] = l.exec
		switch {
		case l.msg.Partition == 1:
			other = l.msg
		case l.exec == "a":
			first = l.msg
		default:
			second = l.msg
		}
	}
	if first == nil || second == nil || other == nil || second.Attempt != 1 {
		t.Fatalf("launches = %+v", out.launches)
	}
	finish := func(m *messages.LaunchTask, result string) {
		t.Helper()
		if s.statusUpdate(&messages.StatusUpdate{ExecutorId: execOf[m.TaskId], TaskId: m.TaskId, State: messages.TaskState_TASK_STATE_FINISHED,
			Result: []byte(result)}, "", &out) == nil {
			t.Fatalf("task %d unknown to the scheduler", m.TaskId)
		}
	}
	finish(second, "real")
	finish(first, "late")
	if j.ended || j.left != 1 || string(j.results[0]) != "real" {
		t.Fatalf("after a duplicate result: ended=%v left=%d result[0]=%q; want the first result kept, job running",
			j.ended, j.left, j.results[0])
	}
	finish(other, "one")
	select {
	case <-j.done:
	default:
		t.Fatal("job not done after every partition finished")
	}
	if j.err != nil || string(j.results[0]) != "real" || string(j.results[1]) != "one" {
		t.Fatalf("job = %q, %v", j.results, j.err)
	}
}
