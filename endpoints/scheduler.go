package endpoints

// This file holds the task scheduler: FIFO jobs, their pending partitions and
// running attempts, with no I/O.

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// job is one RunJob: a task set of one task per payload (Spark's TaskSet
// and TaskSetManager in one). All of it is guarded by Driver.mu.
type job struct {
	id       int64
	taskName string
	payloads [][]byte
	files    map[string]int64 // the added files, as the driver had them at submission
	started  time.Time

	pending  []int // partitions waiting for an executor, FIFO
	head     int
	attempts []int  // launches per partition
	failures []int  // failed attempts per partition
	finished []bool // partitions whose result is in
	results  [][]byte
	resultB  int64 // the bytes of the results in
	left     int   // partitions without a result
	running  int   // attempts in flight
	launches int   // attempts launched, of every partition

	ended bool
	err   error
	done  chan struct{}
}

func (j *job) hasPending() bool { return j.head < len(j.pending) }

func (j *job) popPending() int {
	p := j.pending[j.head]
	j.head++
	if j.head == len(j.pending) {
		j.pending, j.head = j.pending[:0], 0
	}
	return p
}

func (j *job) requeue(p int) { j.pending = append(j.pending, p) }

// attempt is a launched task: Spark's TaskInfo.
type attempt struct {
	id        int64
	job       *job
	partition int
	attempt   int
	exec      *executorData
	launched  time.Time
	running   bool // its executor reported it RUNNING (Spark's !launching)
}

// launch is a task to send to an executor once the lock is released.
type launch struct {
	exec string
	ref  *actor.Ref
	msg  *messages.LaunchTask
}

// kill is a KillTask to send once the lock is released.
type kill struct {
	ref *actor.Ref
	msg *messages.KillTask
}

// taskScheduler keeps the task sets in FIFO order and matches pending tasks
// with free cores (Spark's TaskSchedulerImpl). It does no I/O: the driver
// endpoint calls it under Driver.mu and sends what it returns.
type taskScheduler struct {
	maxFailures int
	cpus        int
	maxSize     int
	maxResult   int64 // spark.driver.maxResultSize; 0: no limit

	nextJobID  int64
	nextTaskID int64
	jobs       []*job // active jobs, FIFO
	running    map[int64]*attempt
	free       []*attempt // ended attempts, reused by the next launches
}

func newTaskScheduler(maxFailures, cpus, maxSize int, maxResult int64) *taskScheduler {
	return &taskScheduler{maxFailures: maxFailures, cpus: cpus, maxSize: maxSize, maxResult: maxResult, running: make(map[int64]*attempt)}
}

func (s *taskScheduler) submit(taskName string, payloads [][]byte, files map[string]int64) *job {
	n := len(payloads)
	j := &job{
		id:       s.nextJobID,
		taskName: taskName,
		payloads: payloads,
		files:    files,
		started:  time.Now(),
		pending:  make([]int, n),
		attempts: make([]int, n),
		failures: make([]int, n),
		finished: make([]bool, n),
		results:  make([][]byte, n),
		left:     n,
		done:     make(chan struct{}),
	}
	s.nextJobID++
	for i := range j.pending {
		j.pending[i] = i
	}
	s.jobs = append(s.jobs, j)
	return j
}

func (s *taskScheduler) hasPending() bool {
	for _, j := range s.jobs {
		if j.hasPending() {
			return true
		}
	}
	return false
}

func (s *taskScheduler) nextPendingJob() *job {
	for _, j := range s.jobs {
		if j.hasPending() {
			return j
		}
	}
	return nil
}

// end finishes j with err (nil: success) and takes it off the queue.
func (s *taskScheduler) end(j *job, err error) {
	if j.ended {
		return
	}
	j.ended, j.err = true, err
	if err != nil {
		j.results = nil
	}
	for i, q := range s.jobs {
		if q == j {
			s.jobs = append(s.jobs[:i], s.jobs[i+1:]...)
			break
		}
	}
	j.pending, j.head = nil, 0
	close(j.done)
}

// killRunning returns the KillTasks of j's running attempts.
func (s *taskScheduler) killRunning(j *job, reason string) []kill {
	var ks []kill
	if j.running == 0 {
		return nil
	}
	reason = fitReason(reason, s.maxSize)
	for _, a := range s.running {
		if a.job == j {
			ks = append(ks, kill{ref: a.exec.ref, msg: &messages.KillTask{
				TaskId: a.id, ExecutorId: a.exec.id, InterruptThread: true, Reason: reason}})
		}
	}
	// In the order the tasks were launched, not the map's.
	slices.SortFunc(ks, func(a, b kill) int { return cmp.Compare(a.msg.TaskId, b.msg.TaskId) })
	return ks
}

// abandonRunning takes every attempt still running out of the scheduler
// and returns their KILLED TaskEnds, in launch order: the driver is
// stopping, and the updates their executors would send come too late to
// be read. So a listener (the event log) sees every task that started end.
func (s *taskScheduler) abandonRunning(reason string) []TaskEnd {
	as := make([]*attempt, 0, len(s.running))
	for _, a := range s.running {
		as = append(as, a)
	}
	slices.SortFunc(as, func(a, b *attempt) int { return cmp.Compare(a.id, b.id) })
	ends := make([]TaskEnd, 0, len(as))
	for _, a := range as {
		delete(s.running, a.id)
		a.job.running--
		a.exec.freeCores += s.cpus
		ends = append(ends, taskEnd(a, messages.TaskState_TASK_STATE_KILLED, reason))
	}
	return ends
}

// abort ends j with a *JobAbortedError and returns the kills of its running
// attempts.
func (s *taskScheduler) abort(j *job, reason string, cause error) []kill {
	s.end(j, &JobAbortedError{JobID: j.id, Reason: reason, Err: cause})
	return s.killRunning(j, "Stage cancelled: "+reason)
}

// resourceOffers assigns pending tasks to the free cores of offers, one task
// per executor per round (round-robin), and returns the tasks to launch.
// It takes the cores of what it assigns.
func (s *taskScheduler) resourceOffers(offers []*executorData, out *offerResult) {
	for {
		progress := false
		for _, ex := range offers {
			if ex.freeCores < s.cpus {
				continue
			}
			for {
				j := s.nextPendingJob()
				if j == nil {
					return
				}
				p := j.popPending()
				msg := &messages.LaunchTask{
					TaskId:     s.nextTaskID,
					Attempt:    int32(j.attempts[p]),
					Partition:  int32(p),
					TaskName:   j.taskName,
					Payload:    j.payloads[p],
					JobId:      j.id,
					Cpus:       int32(s.cpus),
					AddedFiles: j.files,
				}
				if size, over := tooLarge(msg, s.maxSize); over {
					reason := fmt.Sprintf("Serialized task %d:%d was %d bytes, which %s. "+
						"Consider increasing %s or using broadcast variables for large values.",
						msg.TaskId, p, size, maxAllowed(s.maxSize), actor.KeyMessageMaxSize)
					s.nextTaskID++
					out.kills = append(out.kills, s.abort(j, reason, ErrTaskTooLarge)...)
					out.ended = append(out.ended, j)
					continue
				}
				s.nextTaskID++
				a := s.newAttempt()
				*a = attempt{id: msg.TaskId, job: j, partition: p, attempt: j.attempts[p], exec: ex, launched: time.Now()}
				j.attempts[p]++
				j.launches++
				j.running++
				s.running[a.id] = a
				ex.freeCores -= s.cpus
				out.launches = append(out.launches, launch{exec: ex.id, ref: ex.ref, msg: msg})
				out.started = append(out.started, a)
				progress = true
				break
			}
		}
		if !progress {
			return
		}
	}
}

// newAttempt returns an ended attempt to reuse, or a new one: a running job
// allocates none in its steady state.
func (s *taskScheduler) newAttempt() *attempt {
	if k := len(s.free); k > 0 {
		a := s.free[k-1]
		s.free[k-1] = nil
		s.free = s.free[:k-1]
		return a
	}
	return new(attempt)
}

// release takes back an attempt that statusUpdate returned, once the caller
// is done with it; nothing else refers to it by then (the running map
// forgot it, and events copied what they report). The free list is bounded
// by the number of attempts that ran at once.
func (s *taskScheduler) release(a *attempt) {
	*a = attempt{}
	s.free = append(s.free, a)
}

// offerResult collects what a scheduling step wants sent and published.
type offerResult struct {
	launches []launch
	kills    []kill
	started  []*attempt
	endedAt  []TaskEnd
	ended    []*job
}

// offerResults recycles the offerResults of status updates and offers, so
// that the steady state of a running job allocates none for them.
var offerResults = sync.Pool{New: func() any { return new(offerResult) }}

// getOfferResult returns an empty offerResult; putOfferResult takes it back
// once what it holds was sent and published.
func getOfferResult() *offerResult { return offerResults.Get().(*offerResult) }

func putOfferResult(out *offerResult) {
	clear(out.launches)
	clear(out.kills)
	clear(out.started)
	clear(out.endedAt)
	clear(out.ended)
	out.launches, out.kills, out.started = out.launches[:0], out.kills[:0], out.started[:0]
	out.endedAt, out.ended = out.endedAt[:0], out.ended[:0]
	offerResults.Put(out)
}

// statusUpdate applies a task's final state, sent from the env peer (""
// for this one). It returns the attempt (nil for an unknown or already
// handled task id, or an update that does not come from the executor the
// task runs on: that names another, or comes from another env), whose
// cores the caller frees.
func (s *taskScheduler) statusUpdate(u *messages.StatusUpdate, peer string, out *offerResult) *attempt {
	a := s.running[u.GetTaskId()]
	if a == nil || a.exec.id != u.GetExecutorId() || !a.exec.from(peer) {
		return nil
	}
	delete(s.running, a.id)
	j := a.job
	j.running--
	state := u.GetState()
	end := taskEnd(a, state, u.GetError())
	end.ResultSize = int64(len(u.GetResult()))
	end.RunTime = time.Duration(u.GetRunTimeNanos())
	out.endedAt = append(out.endedAt, end)
	if j.ended || j.finished[a.partition] {
		return a // a late or duplicate result: ignored
	}
	switch state {
	case messages.TaskState_TASK_STATE_FINISHED:
		j.resultB += int64(len(u.GetResult()))
		if s.maxResult > 0 && j.resultB > s.maxResult {
			reason := fmt.Sprintf("Total size of serialized results of %d tasks (%d bytes) is bigger than %s (%d bytes)",
				len(j.finished)-j.left+1, j.resultB, KeyMaxResultSize, s.maxResult)
			out.kills = append(out.kills, s.abort(j, reason, ErrResultTooLarge)...)
			j.results = nil // the driver holds no more of them
			out.ended = append(out.ended, j)
			return a
		}
		j.finished[a.partition] = true
		j.results[a.partition] = u.GetResult()
		j.left--
		if j.left == 0 {
			s.end(j, nil)
			out.ended = append(out.ended, j)
		}
	case messages.TaskState_TASK_STATE_FAILED:
		j.failures[a.partition]++
		if j.failures[a.partition] >= s.maxFailures {
			reason := fmt.Sprintf("Task %d in job %d failed %d times, most recent failure: Lost task %d.%d (TID %d) (executor %s): %s",
				a.partition, j.id, j.failures[a.partition], a.partition, a.attempt, a.id, a.exec.id, u.GetError())
			out.kills = append(out.kills, s.abort(j, reason, ErrTaskFailed)...)
			out.ended = append(out.ended, j)
			return a
		}
		j.requeue(a.partition)
	default: // KILLED, LOST: run it again, not counted as a failure (a lost executor's may be: executorLost)
		j.requeue(a.partition)
	}
	return a
}

// executorLost re-queues the running attempts of ex, in the order they
// were launched (not the map's, which would make the order the tasks run
// again in random).
//
// When byApp is set (the loss may be the task's doing: Spark's
// exitCausedByApp), an attempt that had started running counts as a
// failure of its partition, as Spark's ExecutorLostFailure does.
func (s *taskScheduler) executorLost(ex *executorData, reason string, byApp bool, out *offerResult) {
	var lost []*attempt
	for _, a := range s.running {
		if a.exec == ex {
			lost = append(lost, a)
		}
	}
	slices.SortFunc(lost, func(a, b *attempt) int { return cmp.Compare(a.id, b.id) })
	for _, a := range lost {
		delete(s.running, a.id)
		j := a.job
		j.running--
		out.endedAt = append(out.endedAt, taskEnd(a, messages.TaskState_TASK_STATE_LOST, reason))
		if j.ended || j.finished[a.partition] {
			continue
		}
		if byApp && a.running {
			j.failures[a.partition]++
			if j.failures[a.partition] >= s.maxFailures {
				why := fmt.Sprintf("Task %d in job %d failed %d times, most recent failure: Lost task %d.%d (TID %d) (executor %s): "+
					"ExecutorLostFailure (executor %s exited caused by one of the running tasks) Reason: %s",
					a.partition, j.id, j.failures[a.partition], a.partition, a.attempt, a.id, ex.id, ex.id, reason)
				out.kills = append(out.kills, s.abort(j, why, ErrTaskFailed)...)
				out.ended = append(out.ended, j)
				continue
			}
		}
		j.requeue(a.partition)
	}
}

func taskEnd(a *attempt, state messages.TaskState, errText string) TaskEnd {
	now := time.Now()
	return TaskEnd{Time: now, JobID: a.job.id, TaskID: a.id, Partition: a.partition, Attempt: a.attempt,
		ExecutorID: a.exec.id, State: state, Error: errText, Duration: now.Sub(a.launched)}
}
