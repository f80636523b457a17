package endpoints

// This file holds the executor's task runner: one goroutine per core running
// LaunchTask messages.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// errExecutorStopped is the cause of the tasks an executor cancels when it
// stops.
var errExecutorStopped = errors.New("executor stopped")

// taskRunner runs the tasks an executor was sent on a fixed number of
// goroutines, one per core (Spark's Executor and its task thread pool). The
// driver never sends more tasks than free cores, so tasks rarely wait.
type taskRunner struct {
	execID  string
	driver  *actor.Ref
	maxSize int
	log     zerolog.Logger
	deps    *dependencies

	mu       sync.Mutex
	cond     sync.Cond
	queue    []*messages.LaunchTask // from head on: waiting for a slot
	head     int
	running  map[int64]context.CancelCauseFunc // kill and stop cancel through it
	busy     int                               // queued + running
	closed   bool
	draining bool
	idle     chan struct{} // closed once draining and nothing is busy
	wg       sync.WaitGroup
}

func newTaskRunner(execID string, driver *actor.Ref, slots, maxSize int, deps *dependencies, log zerolog.Logger) *taskRunner {
	r := &taskRunner{execID: execID, driver: driver, maxSize: maxSize, deps: deps, log: log,
		running: make(map[int64]context.CancelCauseFunc), idle: make(chan struct{})}
	r.cond.L = &r.mu
	r.wg.Add(slots)
	for range slots {
		go r.work()
	}
	return r
}

func (r *taskRunner) report(u *messages.StatusUpdate) {
	u.ExecutorId = r.execID
	if u.State == messages.TaskState_TASK_STATE_FINISHED {
		if _, over := tooLarge(u, r.maxSize); over {
			size := len(u.Result)
			u.Result = nil
			u.State = messages.TaskState_TASK_STATE_FAILED
			u.Error = fmt.Sprintf("Task %d result was %d bytes, which %s", u.TaskId, size, maxAllowed(r.maxSize))
		}
	}
	fitStatusError(u, r.maxSize)
	err := r.driver.Send(u)
	if errors.Is(err, actor.ErrMessageTooLarge) && u.State == messages.TaskState_TASK_STATE_FINISHED {
		// The check above let it through and the transport did not: the
		// task fails rather than leave its job waiting for it.
		u.Result, u.State = nil, messages.TaskState_TASK_STATE_FAILED
		u.Error = fmt.Sprintf("Task %d result could not be sent: %v", u.TaskId, err)
		err = r.driver.Send(u)
	}
	if err != nil {
		r.log.Warn().Err(err).Int64("tid", u.TaskId).Str("state", stateName(u.State)).Msg("could not report task status")
	}
}

// launch queues t for the next free slot.
func (r *taskRunner) launch(t *messages.LaunchTask) {
	r.mu.Lock()
	if r.closed || r.draining {
		why := "executor is stopping"
		if !r.closed {
			why = "executor is decommissioning"
		}
		r.mu.Unlock()
		r.report(&messages.StatusUpdate{TaskId: t.TaskId, State: messages.TaskState_TASK_STATE_LOST, Error: why, TaskCpus: t.Cpus})
		return
	}
	r.queue = append(r.queue, t)
	r.busy++
	r.cond.Signal()
	r.mu.Unlock()
}

// kill cancels task id: a queued task is dropped, a running one sees its
// context cancelled with reason.
func (r *taskRunner) kill(id int64, reason string) {
	r.mu.Lock()
	for i, t := range r.queue[r.head:] {
		if t.TaskId == id {
			i += r.head
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			r.doneLocked()
			r.mu.Unlock()
			r.report(&messages.StatusUpdate{TaskId: id, State: messages.TaskState_TASK_STATE_KILLED, Error: reason, TaskCpus: t.Cpus})
			return
		}
	}
	cancel := r.running[id]
	r.mu.Unlock()
	if cancel != nil {
		cancel(errors.New(reason))
	}
}

// numBusy returns the number of tasks queued or running.
func (r *taskRunner) numBusy() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.busy
}

func (r *taskRunner) doneLocked() {
	r.busy--
	if r.busy == 0 && r.draining {
		select {
		case <-r.idle:
		default:
			close(r.idle)
		}
	}
}

// drain makes the runner refuse new tasks; the returned channel is closed
// once the running ones have ended.
func (r *taskRunner) drain() <-chan struct{} {
	r.mu.Lock()
	if !r.draining {
		r.draining = true
		if r.busy == 0 {
			close(r.idle)
		}
	}
	r.mu.Unlock()
	return r.idle
}

// stop cancels every task, drops the queued ones, and waits up to timeout
// for the running ones to return.
func (r *taskRunner) stop(timeout time.Duration) {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.queue, r.head = nil, 0
		r.cond.Broadcast()
	}
	// Once closed, no task starts: the running ones are all here.
	cancels := make([]context.CancelCauseFunc, 0, len(r.running))
	for _, cancel := range r.running {
		cancels = append(cancels, cancel)
	}
	r.mu.Unlock()
	for _, cancel := range cancels {
		cancel(errExecutorStopped)
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.log.Warn().Dur("timeout", timeout).Msg("tasks did not return after they were cancelled")
	}
}

func (r *taskRunner) work() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		for r.head == len(r.queue) && !r.closed {
			r.cond.Wait()
		}
		if r.closed {
			r.mu.Unlock()
			return
		}
		// Taken from the head, the queue keeps its array: a launch
		// appends without allocating.
		t := r.queue[r.head]
		r.queue[r.head] = nil
		r.head++
		if r.head == len(r.queue) {
			r.queue, r.head = r.queue[:0], 0
		}
		// A context of its own, not derived from one of the runner's:
		// stop cancels the running tasks one by one, and a derived
		// context would cost a registration with its parent per task.
		ctx, cancel := context.WithCancelCause(context.Background())
		r.running[t.TaskId] = cancel
		r.mu.Unlock()

		r.run(ctx, t)
		cancel(nil)

		r.mu.Lock()
		delete(r.running, t.TaskId)
		r.doneLocked()
		r.mu.Unlock()
	}
}

func (r *taskRunner) run(ctx context.Context, t *messages.LaunchTask) {
	r.report(&messages.StatusUpdate{TaskId: t.TaskId, State: messages.TaskState_TASK_STATE_RUNNING, TaskCpus: t.Cpus})
	u := &messages.StatusUpdate{TaskId: t.TaskId, TaskCpus: t.Cpus}
	fn, ok := LookupTask(t.TaskName)
	if !ok {
		u.State, u.Error = messages.TaskState_TASK_STATE_FAILED, fmt.Sprintf("%v: %q", ErrUnknownTask, t.TaskName)
		r.report(u)
		return
	}
	tc := TaskContext{TaskID: t.TaskId, Attempt: int(t.Attempt), Partition: int(t.Partition), ExecutorID: r.execID, JobID: t.JobId,
		FilesDir: r.deps.dir}
	var res []byte
	err := r.deps.update(ctx, t.AddedFiles)
	if err == nil {
		began := time.Now()
		res, err = callTask(ctx, fn, tc, t.Payload)
		u.RunTimeNanos = int64(time.Since(began))
	}
	switch {
	case ctx.Err() != nil:
		u.State, u.Error = messages.TaskState_TASK_STATE_KILLED, context.Cause(ctx).Error()
	case err != nil:
		u.State, u.Error = messages.TaskState_TASK_STATE_FAILED, err.Error()
	default:
		u.State, u.Result = messages.TaskState_TASK_STATE_FINISHED, res
	}
	if u.State != messages.TaskState_TASK_STATE_FINISHED {
		r.log.Warn().Int64("tid", t.TaskId).Int32("partition", t.Partition).Int32("attempt", t.Attempt).
			Str("state", stateName(u.State)).Str("error", u.Error).Msg("task did not finish")
	}
	r.report(u)
}

// callTask runs fn and turns a panic into an error whose text has the
// panic's value.
func callTask(ctx context.Context, fn TaskFunc, tc TaskContext, payload []byte) (res []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("task panicked: %v", v)
		}
	}()
	return fn(ctx, tc, payload)
}
