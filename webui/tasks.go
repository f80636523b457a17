package webui

// This file holds the task attempts a job keeps (a slice of small rows
// per job, Spark's TaskDataWrapper) and how a page of them is sorted and
// cut (Spark's stage page task table and its taskList API).

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// taskState is a task attempt's status as the pages name it.
type taskState uint8

const (
	taskRunning taskState = iota
	taskSuccess
	taskFailed
	taskKilled
	taskLost
)

var taskStateNames = [...]string{"RUNNING", "SUCCESS", "FAILED", "KILLED", "LOST"}

func (s taskState) String() string { return taskStateNames[s] }

func taskStateOf(s messages.TaskState) taskState {
	switch s {
	case messages.TaskState_TASK_STATE_FINISHED:
		return taskSuccess
	case messages.TaskState_TASK_STATE_KILLED:
		return taskKilled
	case messages.TaskState_TASK_STATE_LOST:
		return taskLost
	case messages.TaskState_TASK_STATE_LAUNCHING, messages.TaskState_TASK_STATE_RUNNING:
		return taskRunning
	}
	return taskFailed
}

// taskRow is one task attempt as a job keeps it: 72 bytes on 64-bit
// platforms, plus its error's text when it has one. Times are Unix
// nanoseconds and durations nanoseconds, so that a row holds no pointer
// but the error; the executor is an index into the store's interned ids.
type taskRow struct {
	id         int64
	launch     int64
	duration   int64 // 0 while running
	runTime    int64
	resultSize int64
	err        string
	index      int32 // the partition
	attempt    int32
	exec       int32
	state      taskState
}

// lateRows is the most rows a job holds out of id order before they are
// merged into its ordered ones. Rows come in id order but for a log's
// oddities (a task's end without its start, starts written out of order):
// inserting each in place shifted every row after it, and a log of 40,000
// starts in descending order took 2.26 s to replay against 68 ms in
// ascending order. Merged a batch at a time, a late row costs a
// lateRows-th of a pass over the rows.
const lateRows = 1024

// findTask returns task id's row among j's: by a binary search of the
// rows in id order, else among the late ones.
func (j *jobStatus) findTask(id int64) (*taskRow, bool) {
	if i, ok := slices.BinarySearchFunc(j.tasks, id, func(t taskRow, id int64) int { return cmp.Compare(t.id, id) }); ok {
		return &j.tasks[i], true
	}
	for i := range j.late {
		if j.late[i].id == id {
			return &j.late[i], true
		}
	}
	return nil, false
}

// rowCount returns how many rows j keeps.
func (j *jobStatus) rowCount() int { return len(j.tasks) + len(j.late) }

// merge puts j's late rows among its rows in id order; every reader of the
// rows in order calls it first.
func (j *jobStatus) merge() {
	if len(j.late) == 0 {
		return
	}
	slices.SortStableFunc(j.late, func(a, b taskRow) int { return cmp.Compare(a.id, b.id) })
	rows := make([]taskRow, 0, len(j.tasks)+len(j.late))
	a, b := j.tasks, j.late
	for len(a) > 0 && len(b) > 0 {
		if b[0].id < a[0].id {
			rows, b = append(rows, b[0]), b[1:]
		} else {
			rows, a = append(rows, a[0]), a[1:]
		}
	}
	j.tasks, j.late = append(append(rows, a...), b...), nil
}

// dropRows drops n of j's rows: its oldest ended task attempts, and when
// there are too few, its oldest running ones. A job's rows are scanned
// only when it has ended ones to drop, and n is a tenth of the limit at
// least, so that starts without ends cost no scan each.
func (j *jobStatus) dropRows(n int) {
	j.merge()
	if j.endedRows > 0 {
		n -= j.dropEnded(n)
	}
	if n > 0 {
		j.dropRunning(n)
	}
}

// dropEnded drops up to n of j's oldest ended task attempts and returns
// how many it dropped.
func (j *jobStatus) dropEnded(n int) int {
	dropped := 0
	j.tasks = slices.DeleteFunc(j.tasks, func(r taskRow) bool {
		if dropped < n && r.state != taskRunning {
			dropped++
			return true
		}
		return false
	})
	j.DroppedTasks += dropped
	j.endedRows -= dropped
	return dropped
}

// dropRunning drops up to n of j's oldest running task attempts (j has
// no ended ones left to drop).
func (j *jobStatus) dropRunning(n int) {
	n = min(n, len(j.tasks))
	for _, r := range j.tasks[:n] {
		j.runningFloor = max(j.runningFloor, r.id)
	}
	j.tasks = slices.Delete(j.tasks, 0, n)
	j.DroppedRunning += n
}

// indexSet is a set of a job's task indices (Spark's completedIndices).
// Its memory follows the indices it holds, never one index's value: a
// bitset over the low indices, grown only while it stays dense enough
// (at most 1024 bits plus 64 per index held), and a map for the
// indices beyond it. A job's tasks finishing in about their order stay
// in the bitset: 100,000 indices take 12.5 KB.
type indexSet struct {
	bits []uint64
	n    int
	far  map[int]struct{}
}

// add adds i (≥ 0) and reports whether it was not in the set.
func (s *indexSet) add(i int) bool {
	if _, ok := s.far[i]; ok {
		return false
	}
	w := i / 64
	if w >= len(s.bits) && w < 16+s.n {
		s.bits = append(s.bits, make([]uint64, w+1-len(s.bits))...)
	}
	if w >= len(s.bits) {
		if s.far == nil {
			s.far = map[int]struct{}{}
		}
		s.far[i] = struct{}{}
		s.n++
		return true
	}
	bit := uint64(1) << (i % 64)
	if s.bits[w]&bit != 0 {
		return false
	}
	s.bits[w] |= bit
	s.n++
	return true
}

// Task table columns: the values of task.sort (Spark's column names).
const (
	colIndex      = "Index"
	colTaskID     = "Task ID"
	colAttempt    = "Attempt"
	colExecutor   = "Executor ID"
	colHost       = "Host"
	colStatus     = "Status"
	colLaunchTime = "Launch Time"
	colDuration   = "Duration"
	colRunTime    = "Run Time"
	colResultSize = "Result Size"
	colErrors     = "Errors"
)

// taskColumns are the task table's columns in order.
var taskColumns = []string{colIndex, colTaskID, colAttempt, colExecutor, colHost, colStatus, colLaunchTime,
	colDuration, colRunTime, colResultSize, colErrors}

// taskQuery is what page of which tasks to show.
type taskQuery struct {
	Sort           string // one of taskColumns; colIndex when unknown
	Desc           bool
	Offset, Length int
	// Clamp makes an offset past the last task that of the last page
	// (a page's pager), rather than an empty page (the REST API).
	Clamp bool
}

// taskView is one task attempt as a page or the API shows it.
type taskView struct {
	Index, Attempt     int
	TaskID             int64
	ExecutorID, Host   string
	Status             string
	Launch             time.Time
	Duration           time.Duration // to now while it runs
	Running            bool
	RunTime            time.Duration
	ResultSize         int64
	Error, ErrorHead   string
	ErrorHasMore       bool
	launchNs, duration int64
}

// executorNames are the store's interned executor ids and hosts, as a
// task row's exec indexes them.
type executorNames struct{ ids, hosts []string }

// tasksPage returns the tasks of job id that q selects, the number of
// tasks the job keeps and whether the job is known. The store's lock is
// held only to copy the job's rows (72 bytes each) and the executors'
// names: the sort, of positions, never of rows or strings, is done
// outside it, so that the listener bus never waits for a page's sort.
func (s *AppStore) tasksPage(id int64, q taskQuery, now time.Time) ([]taskView, int, bool) {
	rows, names, ok := s.copyTasks(id)
	if !ok {
		return nil, 0, false
	}
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	less := names.taskCompare(rows, q.Sort, now.UnixNano())
	slices.SortStableFunc(order, func(a, b int32) int {
		c := less(&rows[a], &rows[b])
		if c == 0 {
			c = cmp.Or(cmp.Compare(rows[a].index, rows[b].index), cmp.Compare(rows[a].id, rows[b].id))
		}
		if q.Desc {
			return -c
		}
		return c
	})
	lo := min(max(q.Offset, 0), len(order))
	if q.Clamp && lo == len(order) && lo > 0 && q.Length > 0 {
		lo = (len(order) - 1) / q.Length * q.Length
	}
	hi := min(lo+max(q.Length, 0), len(order))
	out := make([]taskView, 0, hi-lo)
	for _, i := range order[lo:hi] {
		out = append(out, names.taskView(&rows[i], now))
	}
	return out, len(rows), true
}

// copyTasks returns a copy of job id's rows and of the executors' names.
// The copy's memory is allocated before the lock is taken (the job's size
// read first, and a tenth more), so that the lock is not held while the
// allocation waits for the garbage collector.
func (s *AppStore) copyTasks(id int64) ([]taskRow, executorNames, bool) {
	s.mu.Lock()
	j, ok := s.jobs[id]
	n := 0
	if ok {
		n = j.rowCount()
	}
	s.mu.Unlock()
	if !ok {
		return nil, executorNames{}, false
	}
	rows := make([]taskRow, 0, n+n/10+16)
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok = s.jobs[id]; !ok {
		return nil, executorNames{}, false
	}
	j.merge()
	rows = append(rows, j.tasks...)
	return rows, executorNames{ids: slices.Clone(s.execIDs), hosts: slices.Clone(s.execHosts)}, true
}

// taskCompare returns the comparison of rows by column col.
func (n executorNames) taskCompare(rows []taskRow, col string, now int64) func(a, b *taskRow) int {
	dur := func(r *taskRow) int64 {
		if r.state == taskRunning && r.launch != 0 {
			return now - r.launch
		}
		return r.duration
	}
	switch col {
	case colTaskID:
		return func(a, b *taskRow) int { return cmp.Compare(a.id, b.id) }
	case colAttempt:
		return func(a, b *taskRow) int { return cmp.Compare(a.attempt, b.attempt) }
	case colExecutor:
		return func(a, b *taskRow) int { return compareIDs(n.ids[a.exec], n.ids[b.exec]) }
	case colHost:
		return func(a, b *taskRow) int { return strings.Compare(n.hosts[a.exec], n.hosts[b.exec]) }
	case colStatus:
		return func(a, b *taskRow) int { return strings.Compare(a.state.String(), b.state.String()) }
	case colLaunchTime:
		return func(a, b *taskRow) int { return cmp.Compare(a.launch, b.launch) }
	case colDuration:
		return func(a, b *taskRow) int { return cmp.Compare(dur(a), dur(b)) }
	case colRunTime:
		return func(a, b *taskRow) int { return cmp.Compare(a.runTime, b.runTime) }
	case colResultSize:
		return func(a, b *taskRow) int { return cmp.Compare(a.resultSize, b.resultSize) }
	case colErrors:
		return func(a, b *taskRow) int { return strings.Compare(a.err, b.err) }
	}
	return func(a, b *taskRow) int { return cmp.Compare(a.index, b.index) }
}

// taskView returns row r as the pages show it.
func (n executorNames) taskView(r *taskRow, now time.Time) taskView {
	v := taskView{Index: int(r.index), Attempt: int(r.attempt), TaskID: r.id, ExecutorID: n.ids[r.exec],
		Host: n.hosts[r.exec], Status: r.state.String(), Launch: fromNanos(r.launch),
		Duration: time.Duration(r.duration), Running: r.state == taskRunning, RunTime: time.Duration(r.runTime),
		ResultSize: r.resultSize, Error: r.err, launchNs: r.launch, duration: r.duration}
	if v.Running && r.launch != 0 {
		v.Duration = max(0, now.Sub(v.Launch))
		v.duration = int64(v.Duration)
	}
	head, _, more := strings.Cut(r.err, "\n")
	v.ErrorHead, v.ErrorHasMore = head, more
	return v
}

// nanos returns t in Unix nanoseconds as a row keeps it: 0 for an
// unknown (zero) time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos returns the time of Unix nanoseconds n, 0 being unknown.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// tasksForTimeline returns copies of the first n task attempts of job id
// (in launch order) and how many it keeps in all.
func (s *AppStore) tasksForTimeline(id int64, n int, now time.Time) ([]taskView, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return nil, 0
	}
	j.merge()
	rows := j.tasks[:min(n, len(j.tasks))]
	out := make([]taskView, len(rows))
	names := executorNames{ids: s.execIDs, hosts: s.execHosts}
	for i := range rows {
		out[i] = names.taskView(&rows[i], now)
	}
	return out, len(j.tasks)
}
