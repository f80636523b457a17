package webui

// This file holds AppStore, the record of one application that its pages
// show (Spark's AppStatusListener and AppStatusStore), kept from the
// driver's listener events alone, so that a history server can rebuild it
// by replaying an event log.

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

// driverID is the id of the driver's row among the executors, Spark's.
const driverID = "driver"

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
	Attributes         map[string]string // those it registered with (Spark's executor attributes)
}

// PodName is the executor's pod on Kubernetes (its KUBERNETES_POD_NAME
// attribute); "" elsewhere.
func (e executorStatus) PodName() string { return e.Attributes["KUBERNETES_POD_NAME"] }

// LogLinks are its log URLs sorted by name, for the executors page.
func (e executorStatus) LogLinks() []logLink {
	links := make([]logLink, 0, len(e.LogURLs))
	for _, name := range slices.Sorted(maps.Keys(e.LogURLs)) {
		links = append(links, logLink{Name: name, URL: e.LogURLs[name]})
	}
	return links
}

// logLink is one of an executor's log links.
type logLink struct{ Name, URL string }

// IsActive reports whether the executor has not been removed.
func (e executorStatus) IsActive() bool { return e.RemoveTime.IsZero() }

// IsDriver reports whether this is the driver's row.
func (e executorStatus) IsDriver() bool { return e.ID == driverID }

// runsTasks reports whether the row is an executor's: any but the driver's,
// and the driver's in local mode, where the driver's process runs the
// executor (its row has the executor's cores).
func (e executorStatus) runsTasks() bool { return !e.IsDriver() || e.Cores > 0 }

// jobStatus is what the pages show of one job.
type jobStatus struct {
	ID                int64
	Name              string
	NumTasks          int
	Active            int
	Completed, Failed int
	Killed            int
	CompletedIndices  int
	// Skipped are the tasks of NumTasks the job did not run (a Spark
	// log's skipped stages).
	Skipped          int
	Submitted, Ended time.Time
	Status           string // RUNNING, SUCCEEDED, FAILED
	Error            string
	// DroppedTasks counts the ended task attempts no longer kept
	// (spark.ui.retainedTasks); the counts above still include them.
	DroppedTasks int
	// DroppedRunning counts the running task attempts no longer kept:
	// the oldest go when a job holds more than spark.ui.retainedTasks
	// and too few ended ones to drop; their ends are still counted.
	DroppedRunning int
	done           indexSet  // the indices finished, counted in CompletedIndices
	tasks          []taskRow // in launch order, so by task id
	late           []taskRow // rows that came out of id order, not yet merged into tasks (lateRows)
	endedRows      int       // rows of tasks that ended, so dropping scans only when there are some
	runningFloor   int64     // the highest task id of a running row dropped; -1 before

}

// ToRun is how many of its tasks the job runs: NumTasks but those of the
// stages it skipped.
func (j jobStatus) ToRun() int { return j.NumTasks - j.Skipped }

// AppStore is the record of one application that its pages and REST API
// show: the application (ApplicationStart, ApplicationEnd), its
// environment (EnvironmentUpdate), executors, jobs and task attempts. It
// is an endpoints.Listener: add it to a driver, or replay an event log
// into it with OnEvent. Readers take copies under its lock, so a slow page
// holds nothing the listener bus needs for long. Its zero value is not
// usable: call NewAppStore.
type AppStore struct {
	mu                                     sync.Mutex
	retainedJobs, retainedTasks, retainedX int
	app                                    AppInfo
	started                                bool // an ApplicationStart arrived
	completed                              bool // an ApplicationEnd arrived
	env                                    *endpoints.EnvironmentUpdate
	executors                              map[string]*executorStatus
	jobs                                   map[int64]*jobStatus
	ended                                  []int64 // ids of ended jobs, oldest first
	dead                                   []string
	// execIDs and execHosts intern the executors of the task rows:
	// a row holds an index, so that sorting never copies a string.
	execIDs, execHosts []string
	execIndex          map[string]int32
	// internedKept is how many names the last compaction kept
	// (compactExecutors).
	internedKept int
}

// NewAppStore returns an empty store.
func NewAppStore(opts ...StoreOption) *AppStore {
	s := &AppStore{retainedJobs: DefaultRetainedJobs, retainedTasks: DefaultRetainedTasks,
		retainedX: DefaultRetainedDeadExecutors, executors: make(map[string]*executorStatus),
		jobs: make(map[int64]*jobStatus), execIndex: make(map[string]int32)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// seed records executors that registered before the store was added to
// the driver.
func (s *AppStore) seed(infos []endpoints.ExecutorInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range infos {
		if _, ok := s.executors[in.ID]; !ok {
			s.addExecutor(&executorStatus{ID: in.ID, Host: in.Host, HostPort: in.Address.HostPort(),
				Cores: in.TotalCores, AddTime: in.RegistrationTime, LogURLs: maps.Clone(in.LogURLs),
				Attributes: maps.Clone(in.Attributes)})
		}
	}
}

// OnEvent implements endpoints.Listener.
func (s *AppStore) OnEvent(ev endpoints.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := ev.(type) {
	case endpoints.ApplicationStart:
		s.applicationStart(e)
	case endpoints.EnvironmentUpdate:
		env := e
		env.Properties = slices.Clone(e.Properties)
		env.Runtime = maps.Clone(e.Runtime)
		s.env = &env
	case endpoints.ApplicationEnd:
		s.app.End, s.app.Error, s.completed = e.Time, ClipText(e.Error, MaxErrorText), true
	case endpoints.ExecutorAdded:
		// A line may hold 16 MiB: a store keeps what a page shows.
		s.addExecutor(&executorStatus{ID: ClipText(e.ExecutorID, MaxNameText), Host: ClipText(e.Host, MaxNameText),
			HostPort: ClipText(e.Address.HostPort(), MaxNameText), Cores: e.Cores, AddTime: e.Time,
			LogURLs: clipMap(e.LogURLs, MaxNameText), Attributes: clipMap(e.Attributes, MaxNameText)})
	case endpoints.ExecutorRemoved:
		s.removeExecutor(e)
	case endpoints.JobStart:
		// The count is the event's: nothing is sized from it.
		s.jobs[e.JobID] = &jobStatus{ID: e.JobID, Name: ClipText(e.TaskName, MaxNameText), NumTasks: max(0, e.NumTasks), Submitted: e.Time,
			Status: "RUNNING", runningFloor: -1}
	case endpoints.JobEnd:
		s.jobEnd(e)
	case endpoints.TaskStart:
		s.taskStart(e)
	case endpoints.TaskEnd:
		s.taskEnd(e)
	}
}

// applicationStart records the application; fields the event leaves
// empty keep what the store had (the live UI's AppInfo).
func (s *AppStore) applicationStart(e endpoints.ApplicationStart) {
	a := &s.app
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&a.ID, e.AppID)
	set(&a.AttemptID, e.AttemptID)
	set(&a.Name, ClipText(e.AppName, MaxNameText))
	set(&a.User, ClipText(e.User, MaxNameText))
	set(&a.Version, ClipText(e.Version, MaxNameText))
	set(&a.DriverHostPort, ClipText(e.DriverHostPort, MaxNameText))
	if !e.Time.IsZero() {
		a.Start = e.Time
	}
	if e.DriverLogURLs != nil {
		a.DriverLogURLs = clipMap(e.DriverLogURLs, MaxNameText)
	}
	s.started = true
}

func (s *AppStore) addExecutor(ex *executorStatus) {
	if old := s.executors[ex.ID]; old != nil && !old.IsActive() {
		// Registered again after its removal: its old record goes, and
		// with it its place among the removed, which would otherwise
		// delete this one when it ages out.
		s.dead = slices.DeleteFunc(s.dead, func(id string) bool { return id == ex.ID })
	}
	s.executors[ex.ID] = ex
	if i, ok := s.execIndex[ex.ID]; ok {
		s.execHosts[i] = ex.Host
		return
	}
	s.intern(ex.ID, ex.Host)
}

func (s *AppStore) removeExecutor(e endpoints.ExecutorRemoved) {
	ex := s.executors[ClipText(e.ExecutorID, MaxNameText)]
	if ex == nil || !ex.IsActive() {
		return
	}
	ex.RemoveTime, ex.RemoveReason, ex.Active = e.Time, ClipText(e.Reason, MaxErrorText), 0
	s.dead = append(s.dead, ex.ID)
	if len(s.dead) > s.retainedX {
		delete(s.executors, s.dead[0])
		s.dead = s.dead[1:]
	}
}

func (s *AppStore) jobEnd(e endpoints.JobEnd) {
	j := s.jobs[e.JobID]
	if j == nil {
		return
	}
	j.Ended, j.Status, j.Skipped = e.Time, "SUCCEEDED", min(max(0, e.SkippedTasks), j.NumTasks)
	if e.Err != nil {
		j.Status, j.Error = "FAILED", ClipText(e.Err.Error(), MaxErrorText)
	}
	s.ended = append(s.ended, j.ID)
	if len(s.ended) > s.retainedJobs {
		delete(s.jobs, s.ended[0])
		s.ended = s.ended[1:]
	}
}

func (s *AppStore) taskStart(e endpoints.TaskStart) {
	e.ExecutorID = ClipText(e.ExecutorID, MaxNameText) // as addExecutor keeps it, and interned once per id
	if ex := s.executors[e.ExecutorID]; ex != nil {
		ex.Active++
	}
	j := s.jobs[e.JobID]
	if j == nil {
		return
	}
	j.Active++
	host := ""
	if ex := s.executors[e.ExecutorID]; ex != nil {
		host = ex.Host
	}
	r := taskRow{id: e.TaskID, launch: nanos(e.Time), index: int32(e.Partition), attempt: int32(e.Attempt),
		exec: s.intern(e.ExecutorID, host)}
	s.insertTask(j, r)
	s.keepRetained(j)
}

func (s *AppStore) taskEnd(e endpoints.TaskEnd) {
	e.ExecutorID = ClipText(e.ExecutorID, MaxNameText)
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
	j := s.jobs[e.JobID]
	if j == nil {
		return
	}
	j.Active = max(0, j.Active-1)
	switch e.State {
	case messages.TaskState_TASK_STATE_FINISHED:
		j.Completed++
		if e.Partition >= 0 && e.Partition < j.NumTasks && j.done.add(e.Partition) {
			j.CompletedIndices++
		}
	case messages.TaskState_TASK_STATE_FAILED:
		j.Failed++
	default:
		j.Killed++
	}
	r, ok := j.findTask(e.TaskID)
	if !ok && e.TaskID <= j.runningFloor {
		return // its running row was dropped: counted above, not kept again
	}
	if !ok {
		// An end without its start (a log cut at its head): keep it.
		host := ""
		if ex := s.executors[e.ExecutorID]; ex != nil {
			host = ex.Host
		}
		launch := int64(0)
		if !e.Time.IsZero() {
			launch = nanos(e.Time.Add(-e.Duration))
		}
		r = s.insertTask(j, taskRow{id: e.TaskID, launch: launch,
			index: int32(e.Partition), attempt: int32(e.Attempt), exec: s.intern(e.ExecutorID, host)})
	}
	was := r.state
	r.state = taskStateOf(e.State)
	switch {
	case was == taskRunning && r.state != taskRunning:
		j.endedRows++
	case was != taskRunning && r.state == taskRunning:
		j.endedRows-- // an end that says running
	}
	r.duration, r.runTime, r.resultSize, r.err = int64(e.Duration), int64(e.RunTime), e.ResultSize, ClipText(e.Error, MaxErrorText)
	if !ok {
		s.keepRetained(j) // as a started row is
	}
}

// keepRetained drops j's oldest rows, a tenth of spark.ui.retainedTasks
// at least, once it keeps more than that.
func (s *AppStore) keepRetained(j *jobStatus) {
	if n := j.rowCount(); n > s.retainedTasks {
		j.dropRows(max(n-s.retainedTasks, s.retainedTasks/10))
	}
}

// insertTask adds r to j's rows and returns it there: at the end of the
// rows in id order, or, when it comes out of that order, among the late
// rows (lateRows).
func (s *AppStore) insertTask(j *jobStatus, r taskRow) *taskRow {
	if n := len(j.tasks); n == 0 || j.tasks[n-1].id < r.id {
		j.tasks = append(j.tasks, r)
		return &j.tasks[n]
	}
	j.late = append(j.late, r)
	if len(j.late) < lateRows {
		return &j.late[len(j.late)-1]
	}
	j.merge()
	found, _ := j.findTask(r.id)
	return found
}

// Info returns the application as the store knows it: from
// ApplicationStart (and the live UI's AppInfo) and ApplicationEnd.
func (s *AppStore) Info() AppInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.app
	a.DriverLogURLs = maps.Clone(a.DriverLogURLs)
	return a
}

// Completed reports whether the application's ApplicationEnd arrived.
func (s *AppStore) Completed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed
}

// environment returns a copy of the last EnvironmentUpdate, nil before one.
func (s *AppStore) environment() *endpoints.EnvironmentUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.env == nil {
		return nil
	}
	e := *s.env
	return &e
}

// executorsSnapshot returns copies of the executors (the driver first,
// when an ApplicationStart gave its address, then the active ones, then by
// id as numbers where they are), with their last heartbeats.
func (s *AppStore) executorsSnapshot(heartbeats map[string]time.Time) []executorStatus {
	s.mu.Lock()
	out := make([]executorStatus, 0, len(s.executors)+1)
	// In local mode the driver's process runs the executor, whose id is
	// the driver's (Spark's): its row is the driver's, with its cores.
	_, local := s.executors[driverID]
	if s.app.DriverHostPort != "" && !local {
		host, _, _ := cutHostPort(s.app.DriverHostPort)
		out = append(out, executorStatus{ID: driverID, Host: host, HostPort: s.app.DriverHostPort,
			AddTime: s.app.Start, LogURLs: maps.Clone(s.app.DriverLogURLs)})
	}
	for _, ex := range s.executors {
		c := *ex
		c.LogURLs = maps.Clone(ex.LogURLs)
		if c.ID == driverID && len(c.LogURLs) == 0 {
			c.LogURLs = maps.Clone(s.app.DriverLogURLs)
		}
		c.Attributes = maps.Clone(ex.Attributes)
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

// cutHostPort splits "host:port" at its last colon.
func cutHostPort(hp string) (host, port string, ok bool) {
	for i := len(hp) - 1; i >= 0; i-- {
		if hp[i] == ':' {
			return hp[:i], hp[i+1:], true
		}
	}
	return hp, "", false
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

// jobsSnapshot returns copies of the jobs (without their tasks), newest
// first.
func (s *AppStore) jobsSnapshot() []jobStatus {
	s.mu.Lock()
	out := make([]jobStatus, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, j.summary())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b jobStatus) int { return cmp.Compare(b.ID, a.ID) })
	return out
}

// job returns a copy of job id, without its tasks.
func (s *AppStore) job(id int64) (jobStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return jobStatus{}, false
	}
	return j.summary(), true
}

// summary returns a copy of j without its per-task state.
func (j *jobStatus) summary() jobStatus {
	c := *j
	c.done, c.tasks, c.late = indexSet{}, nil, nil
	return c
}
