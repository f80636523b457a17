package webui

// This file holds appStatus, the driver UI's own record of executors and
// jobs, kept from the driver's listener events (Spark's AppStatusListener
// and AppStatusStore), so that pages never read the scheduler's state.

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// maxRetainedJobs bounds the ended jobs kept for the pages (Spark's
// spark.ui.retainedJobs default); the oldest ended jobs go first.
const maxRetainedJobs = 1000

// maxRetainedDeadExecutors bounds the removed executors kept (Spark's
// spark.ui.retainedDeadExecutors default).
const maxRetainedDeadExecutors = 100

// executorStatus is what the pages show of one executor.
type executorStatus struct {
	ID, Host, HostPort string
	Cores              int
	Active             int // tasks running
	Completed, Failed  int
	TotalDuration      time.Duration
	AddTime            time.Time
	RemoveTime         time.Time // zero while it is active
	RemoveReason       string
	LastHeartbeat      time.Time
	LogURLs            map[string]string
}

// IsActive reports whether the executor has not been removed.
func (e executorStatus) IsActive() bool { return e.RemoveTime.IsZero() }

// jobStatus is what the pages show of one job.
type jobStatus struct {
	ID                int64
	Name              string
	NumTasks          int
	Active            int
	Completed, Failed int
	Killed            int
	CompletedIndices  int
	Submitted, Ended  time.Time
	Status            string // RUNNING, SUCCEEDED, FAILED
	Error             string
	done              []bool
}

// appStatus is a Listener that keeps the executors and jobs; readers take
// copies under its lock, so a slow page holds nothing the driver needs (the
// listener bus runs on its own goroutine and never blocks the driver).
type appStatus struct {
	mu        sync.Mutex
	executors map[string]*executorStatus
	jobs      map[int64]*jobStatus
	ended     []int64 // ids of ended jobs, oldest first
	dead      []string
}

func newAppStatus() *appStatus {
	return &appStatus{executors: make(map[string]*executorStatus), jobs: make(map[int64]*jobStatus)}
}

// seed records executors that registered before the listener was added.
func (s *appStatus) seed(infos []endpoints.ExecutorInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range infos {
		if _, ok := s.executors[in.ID]; !ok {
			s.executors[in.ID] = &executorStatus{ID: in.ID, Host: in.Host, HostPort: in.Address.HostPort(),
				Cores: in.TotalCores, AddTime: in.RegistrationTime, LogURLs: maps.Clone(in.LogURLs)}
		}
	}
}

// OnEvent implements endpoints.Listener.
func (s *appStatus) OnEvent(ev endpoints.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := ev.(type) {
	case endpoints.ExecutorAdded:
		s.executors[e.ExecutorID] = &executorStatus{ID: e.ExecutorID, Host: e.Host, HostPort: e.Address.HostPort(),
			Cores: e.Cores, AddTime: e.Time, LogURLs: maps.Clone(e.LogURLs)}
	case endpoints.ExecutorRemoved:
		if ex := s.executors[e.ExecutorID]; ex != nil && ex.IsActive() {
			ex.RemoveTime, ex.RemoveReason, ex.Active = e.Time, e.Reason, 0
			s.dead = append(s.dead, ex.ID)
			if len(s.dead) > maxRetainedDeadExecutors {
				delete(s.executors, s.dead[0])
				s.dead = s.dead[1:]
			}
		}
	case endpoints.JobStart:
		s.jobs[e.JobID] = &jobStatus{ID: e.JobID, Name: e.TaskName, NumTasks: e.NumTasks, Submitted: e.Time,
			Status: "RUNNING", done: make([]bool, e.NumTasks)}
	case endpoints.JobEnd:
		if j := s.jobs[e.JobID]; j != nil {
			j.Ended, j.Status = e.Time, "SUCCEEDED"
			if e.Err != nil {
				j.Status, j.Error = "FAILED", e.Err.Error()
			}
			s.ended = append(s.ended, j.ID)
			if len(s.ended) > maxRetainedJobs {
				delete(s.jobs, s.ended[0])
				s.ended = s.ended[1:]
			}
		}
	case endpoints.TaskStart:
		if ex := s.executors[e.ExecutorID]; ex != nil {
			ex.Active++
		}
		if j := s.jobs[e.JobID]; j != nil {
			j.Active++
		}
	case endpoints.TaskEnd:
		if ex := s.executors[e.ExecutorID]; ex != nil {
			ex.Active = max(0, ex.Active-1)
			ex.TotalDuration += e.Duration
			switch e.State {
			case messages.TaskState_TASK_STATE_FINISHED:
				ex.Completed++
			case messages.TaskState_TASK_STATE_FAILED:
				ex.Failed++
			}
		}
		if j := s.jobs[e.JobID]; j != nil {
			j.Active = max(0, j.Active-1)
			switch e.State {
			case messages.TaskState_TASK_STATE_FINISHED:
				j.Completed++
				if e.Partition >= 0 && e.Partition < len(j.done) && !j.done[e.Partition] {
					j.done[e.Partition] = true
					j.CompletedIndices++
				}
			case messages.TaskState_TASK_STATE_FAILED:
				j.Failed++
			default:
				j.Killed++
			}
		}
	}
}

// executorsSnapshot returns copies of the executors (active first, then by
// id as numbers where they are), with their last heartbeats.
func (s *appStatus) executorsSnapshot(heartbeats map[string]time.Time) []executorStatus {
	s.mu.Lock()
	out := make([]executorStatus, 0, len(s.executors))
	for _, ex := range s.executors {
		c := *ex
		c.LogURLs = maps.Clone(ex.LogURLs)
		out = append(out, c)
	}
	s.mu.Unlock()
	for i := range out {
		if t, ok := heartbeats[out[i].ID]; ok {
			out[i].LastHeartbeat = t
		}
	}
	slices.SortFunc(out, func(a, b executorStatus) int {
		if a.IsActive() != b.IsActive() {
			if a.IsActive() {
				return -1
			}
			return 1
		}
		return compareIDs(a.ID, b.ID)
	})
	return out
}

// compareIDs orders numeric ids as numbers, others ("driver") first.
func compareIDs(a, b string) int {
	na, ea := strconv.Atoi(a)
	nb, eb := strconv.Atoi(b)
	switch {
	case ea == nil && eb == nil:
		return cmp.Compare(na, nb)
	case ea != nil && eb == nil:
		return -1
	case ea == nil && eb != nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// jobsSnapshot returns copies of the jobs, newest first.
func (s *appStatus) jobsSnapshot() []jobStatus {
	s.mu.Lock()
	out := make([]jobStatus, 0, len(s.jobs))
	for _, j := range s.jobs {
		c := *j
		c.done = nil
		out = append(out, c)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b jobStatus) int { return cmp.Compare(b.ID, a.ID) })
	return out
}

// job returns a copy of job id.
func (s *appStatus) job(id int64) (jobStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return jobStatus{}, false
	}
	c := *j
	c.done = nil
	return c, true
}
