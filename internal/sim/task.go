// The simulator's task function, which every executor runs.

package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// TaskName is the task function the simulated jobs run.
const TaskName = "sparkrpc.sim"

// worlds finds a task's world from its payload: tests of other packages
// never run it, and seeds run one after another.
var worlds sync.Map // seed → *World

func init() { endpoints.RegisterTask(TaskName, runTask) }

// taskPayload is a task's payload: the seed, the job and the partition.
func taskPayload(seed uint64, job, part int) []byte {
	b := binary.BigEndian.AppendUint64(nil, seed)
	b = binary.BigEndian.AppendUint32(b, uint32(job))
	return binary.BigEndian.AppendUint32(b, uint32(part))
}

// expected is the result a partition's task returns.
func expected(seed uint64, job, part int) []byte {
	return fmt.Appendf(nil, "seed %d job %d partition %d", seed, job, part)
}

// mix is a number drawn from the seed and a task's coordinates, so that a
// task's behaviour does not depend on the order tasks run in.
func mix(seed uint64, vals ...int) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	for _, v := range vals {
		binary.BigEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	return h.Sum64()
}

// errInjected is the error of a task that a failure burst makes fail.
var errInjected = errors.New("sim: injected task failure")

// runTask runs for a time drawn from its coordinates, waits while its
// executor is paused, and fails while a failure burst is on.
func runTask(ctx context.Context, tc endpoints.TaskContext, payload []byte) ([]byte, error) {
	if len(payload) != 16 {
		return nil, fmt.Errorf("sim: bad payload of %d bytes", len(payload))
	}
	seed := binary.BigEndian.Uint64(payload)
	job, part := int(binary.BigEndian.Uint32(payload[8:])), int(binary.BigEndian.Uint32(payload[12:]))
	v, ok := worlds.Load(seed)
	if !ok {
		return nil, fmt.Errorf("sim: no world for seed %d", seed)
	}
	w := v.(*World)
	a := w.app
	run := a.taskStarted(job, part, tc)
	defer a.taskEnded(run)
	span := w.cfg.taskMax - w.cfg.taskMin
	d := w.cfg.taskMin + time.Duration(mix(seed, job, part, tc.Attempt)%uint64(span))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		w.turn(fmt.Sprintf("task %12d", tc.TaskID))
		return nil, context.Cause(ctx)
	}
	if err := a.waitResumed(ctx, tc.ExecutorID, tc.TaskID); err != nil {
		w.turn(fmt.Sprintf("task %12d", tc.TaskID))
		return nil, err
	}
	if a.w.failureBurst(job, part, tc.Attempt) {
		a.mu.Lock()
		a.jobs[job].injected[part]++
		a.mu.Unlock()
		return nil, errInjected
	}
	return expected(seed, job, part), nil
}

func (a *app) taskStarted(job, part int, tc endpoints.TaskContext) *taskRun {
	r := &taskRun{job: job, part: part, attempt: tc.Attempt, tid: tc.TaskID, exec: tc.ExecutorID, startAt: a.w.now()}
	a.mu.Lock()
	a.running[tc.TaskID] = r
	a.mu.Unlock()
	a.w.trace.note("task %d (job %d partition %d attempt %d) starts on executor %s", tc.TaskID, job, part, tc.Attempt, tc.ExecutorID)
	return r
}

func (a *app) taskEnded(r *taskRun) {
	a.mu.Lock()
	delete(a.running, r.tid)
	a.mu.Unlock()
}

// waitResumed returns once the task's executor is not paused (a stopped
// process runs no task), or when ctx ends.
func (a *app) waitResumed(ctx context.Context, execID string, tid int64) error {
	a.mu.Lock()
	ex := a.executors[execID]
	if ex == nil || !ex.paused {
		a.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if ex.waiters == nil {
		ex.waiters = make(map[int64]chan struct{})
	}
	ex.waiters[tid] = ch
	a.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		a.mu.Lock()
		delete(ex.waiters, tid)
		a.mu.Unlock()
		return context.Cause(ctx)
	}
}
