package webui

// This file holds an application's REST API: a subset of Spark's /api/v1
// (ApplicationInfo, ExecutorSummary, JobData, TaskData), with Spark's JSON
// field names, answered from the store.

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sparkTime formats t as Spark's REST API does: "2015-02-03T16:42:59.720GMT".
func sparkTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000") + "GMT"
}

// ApplicationInfo is Spark's ApplicationInfo: an entry of
// /api/v1/applications.
type ApplicationInfo struct {
	ID       string                   `json:"id"`
	Name     string                   `json:"name"`
	Attempts []ApplicationAttemptInfo `json:"attempts"`
}

// ApplicationAttemptInfo is Spark's ApplicationAttemptInfo. Times are
// Spark's text ("2015-02-03T16:42:59.720GMT") and epoch milliseconds;
// a running application's end is Spark's "1969-12-31T23:59:59.999GMT" and -1.
type ApplicationAttemptInfo struct {
	AttemptID        string `json:"attemptId,omitempty"`
	StartTime        string `json:"startTime"`
	EndTime          string `json:"endTime"`
	LastUpdated      string `json:"lastUpdated"`
	Duration         int64  `json:"duration"`
	SparkUser        string `json:"sparkUser"`
	Completed        bool   `json:"completed"`
	AppSparkVersion  string `json:"appSparkVersion"`
	StartTimeEpoch   int64  `json:"startTimeEpoch"`
	EndTimeEpoch     int64  `json:"endTimeEpoch"`
	LastUpdatedEpoch int64  `json:"lastUpdatedEpoch"`
}

// executorSummary is the subset of Spark's ExecutorSummary that sparkrpc
// has (no storage, memory or shuffle figures).
type executorSummary struct {
	ID                string            `json:"id"`
	HostPort          string            `json:"hostPort"`
	IsActive          bool              `json:"isActive"`
	TotalCores        int               `json:"totalCores"`
	MaxTasks          int               `json:"maxTasks"`
	ActiveTasks       int               `json:"activeTasks"`
	FailedTasks       int               `json:"failedTasks"`
	CompletedTasks    int               `json:"completedTasks"`
	TotalTasks        int               `json:"totalTasks"`
	TotalDuration     int64             `json:"totalDuration"`
	AddTime           string            `json:"addTime"`
	RemoveTime        string            `json:"removeTime,omitempty"`
	RemoveReason      string            `json:"removeReason,omitempty"`
	ExecutorLogs      map[string]string `json:"executorLogs"`
	Attributes        map[string]string `json:"attributes"`
	LastHeartbeat     string            `json:"lastHeartbeat,omitempty"` // sparkrpc's addition
	LastHeartbeatTime int64             `json:"lastHeartbeatEpoch,omitempty"`
}

// jobData is the subset of Spark's JobData that sparkrpc has: one stage
// per job, numbered as the job (the stage of its taskList route), and no
// stage figures.
type jobData struct {
	JobID               int64  `json:"jobId"`
	Name                string `json:"name"`
	SubmissionTime      string `json:"submissionTime"`
	CompletionTime      string `json:"completionTime,omitempty"`
	StageIDs            []int  `json:"stageIds"`
	Status              string `json:"status"`
	NumTasks            int    `json:"numTasks"`
	NumActiveTasks      int    `json:"numActiveTasks"`
	NumCompletedTasks   int    `json:"numCompletedTasks"`
	NumSkippedTasks     int    `json:"numSkippedTasks"`
	NumFailedTasks      int    `json:"numFailedTasks"`
	NumKilledTasks      int    `json:"numKilledTasks"`
	NumCompletedIndices int    `json:"numCompletedIndices"`
	FailureReason       string `json:"failureReason,omitempty"` // sparkrpc's addition
}

// ApplicationInfo returns the application as /api/v1/applications lists
// it; lastUpdated is the end of a completed application, else now. A
// running application's end is Spark's: endTimeEpoch -1 and its text
// "1969-12-31T23:59:59.999GMT", the same instant.
func (s *AppStore) ApplicationInfo() ApplicationInfo {
	app := s.Info()
	last := time.Now()
	if !app.End.IsZero() {
		last = app.End
	}
	a := attemptInfo(app.AttemptID, app.User, app.Version, app.Start, app.End, last, last.Sub(app.Start), !app.End.IsZero())
	return ApplicationInfo{ID: app.ID, Name: app.Name, Attempts: []ApplicationAttemptInfo{a}}
}

// attemptInfo is Spark's ApplicationAttemptInfo of an attempt that started
// at start, ended at end (zero: it runs; Spark's instant before the epoch
// then) and was last updated at lastUpdated.
func attemptInfo(attemptID, user, version string, start, end, lastUpdated time.Time, d time.Duration, completed bool) ApplicationAttemptInfo {
	endText, endEpoch := sparkTime(time.UnixMilli(-1)), int64(-1)
	if !end.IsZero() {
		endText, endEpoch = sparkTime(end), end.UnixMilli()
	}
	return ApplicationAttemptInfo{AttemptID: attemptID, StartTime: sparkTime(start), EndTime: endText,
		LastUpdated: sparkTime(lastUpdated), Duration: d.Milliseconds(), SparkUser: user, Completed: completed,
		AppSparkVersion: version, StartTimeEpoch: start.UnixMilli(), EndTimeEpoch: endEpoch,
		LastUpdatedEpoch: lastUpdated.UnixMilli()}
}

func (u *appUI) applicationInfo() ApplicationInfo {
	a := u.store.ApplicationInfo()
	a.ID = u.appID()
	return a
}

func summarize(ex executorStatus) executorSummary {
	s := executorSummary{ID: ex.ID, HostPort: ex.HostPort, IsActive: ex.IsActive(), TotalCores: ex.Cores,
		MaxTasks: ex.Cores, ActiveTasks: ex.Active, FailedTasks: ex.Failed, CompletedTasks: ex.Completed,
		TotalTasks: ex.Active + ex.Failed + ex.Completed, TotalDuration: ex.TotalDuration.Milliseconds(),
		AddTime: sparkTime(ex.AddTime), RemoveTime: sparkTime(ex.RemoveTime), RemoveReason: ex.RemoveReason,
		ExecutorLogs: ex.LogURLs, Attributes: ex.Attributes, LastHeartbeat: sparkTime(ex.LastHeartbeat)}
	if s.ExecutorLogs == nil {
		s.ExecutorLogs = map[string]string{}
	}
	if s.Attributes == nil {
		s.Attributes = map[string]string{}
	}
	if !ex.LastHeartbeat.IsZero() {
		s.LastHeartbeatTime = ex.LastHeartbeat.UnixMilli()
	}
	return s
}

func toJobData(j jobStatus) jobData {
	return jobData{JobID: j.ID, Name: j.Name, SubmissionTime: sparkTime(j.Submitted), CompletionTime: sparkTime(j.Ended),
		StageIDs: []int{int(j.ID)}, Status: j.Status, NumTasks: j.NumTasks, NumActiveTasks: j.Active,
		NumCompletedTasks: j.Completed, NumSkippedTasks: j.Skipped, NumFailedTasks: j.Failed, NumKilledTasks: j.Killed,
		NumCompletedIndices: j.CompletedIndices, FailureReason: j.Error}
}

// apiApp checks the {id} of an /api/v1/applications/{id}/... path: false
// (after writing 404) when it is not this application.
func (u *appUI) apiApp(w http.ResponseWriter, r *http.Request) bool {
	if id := r.PathValue("id"); id == "" || id != u.appID() {
		writeJSONError(w, http.StatusNotFound, "unknown app: "+id)
		return false
	}
	return true
}

func (u *appUI) apiApplications(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, []ApplicationInfo{u.applicationInfo()})
}

func (u *appUI) apiApplication(w http.ResponseWriter, r *http.Request) {
	if u.apiApp(w, r) {
		writeJSON(w, u.applicationInfo())
	}
}

// apiExecutors serves .../executors (active executors, as Spark) and
// .../allexecutors (removed ones too).
func (u *appUI) apiExecutors(all bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !u.apiApp(w, r) {
			return
		}
		out := []executorSummary{}
		for _, ex := range u.store.executorsSnapshot(u.heartbeats()) {
			if all || ex.IsActive() {
				out = append(out, summarize(ex))
			}
		}
		writeJSON(w, out)
	}
}

func (u *appUI) apiJobs(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	var want []string
	for _, st := range r.URL.Query()["status"] {
		st = strings.ToUpper(st) // Spark's JobExecutionStatus.fromString ignores case
		if !contains(jobStatuses, st) {
			writeJSONError(w, http.StatusBadRequest, "unknown status: "+st+" (RUNNING, SUCCEEDED, FAILED, UNKNOWN)")
			return
		}
		want = append(want, st)
	}
	out := []jobData{}
	for _, j := range u.store.jobsSnapshot() {
		if len(want) > 0 && !contains(want, j.Status) {
			continue
		}
		out = append(out, toJobData(j))
	}
	writeJSON(w, out)
}

func (u *appUI) apiJob(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	raw := r.PathValue("jobId")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		writeJSONError(w, http.StatusNotFound, "unknown job: "+raw)
		return
	}
	j, ok := u.store.job(id)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "unknown job: "+raw)
		return
	}
	writeJSON(w, toJobData(j))
}

// jobStatuses are Spark's JobExecutionStatus values.
var jobStatuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "UNKNOWN"}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// taskData is the subset of Spark's TaskData that sparkrpc has.
type taskData struct {
	TaskID       int64       `json:"taskId"`
	Index        int         `json:"index"`
	Attempt      int         `json:"attempt"`
	PartitionID  int         `json:"partitionId"`
	LaunchTime   string      `json:"launchTime"`
	Duration     *int64      `json:"duration,omitempty"` // absent while the task runs
	ExecutorID   string      `json:"executorId"`
	Host         string      `json:"host"`
	Status       string      `json:"status"`
	Speculative  bool        `json:"speculative"`
	ErrorMessage string      `json:"errorMessage,omitempty"`
	TaskMetrics  taskMetrics `json:"taskMetrics"`
}

// taskMetrics is the subset of Spark's TaskMetricDistributions' source,
// TaskMetrics, that sparkrpc measures (milliseconds and bytes).
type taskMetrics struct {
	ExecutorRunTime int64 `json:"executorRunTime"`
	ResultSize      int64 `json:"resultSize"`
}

func toTaskData(t taskView) taskData {
	d := taskData{TaskID: t.TaskID, Index: t.Index, Attempt: t.Attempt, PartitionID: t.Index, LaunchTime: sparkTime(t.Launch),
		ExecutorID: t.ExecutorID, Host: t.Host, Status: t.Status, ErrorMessage: t.Error,
		TaskMetrics: taskMetrics{ExecutorRunTime: t.RunTime.Milliseconds(), ResultSize: t.ResultSize}}
	if !t.Running {
		ms := t.Duration.Milliseconds()
		d.Duration = &ms
	}
	return d
}

// apiTaskList serves .../stages/{stageId}/{attemptId}/taskList: the stage
// is the job (its id), its only attempt 0. As Spark's: offset (default 0),
// length (default 20), sortBy ID (the task id, default), runtime or
// -runtime (the executor's run time), and also any column of the job
// page's table by name ("Duration", ...) with a leading "-" for
// descending.
func (u *appUI) apiTaskList(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	raw := r.PathValue("stageId")
	id, err := strconv.ParseInt(raw, 10, 64)
	if _, ok := u.store.job(id); err != nil || !ok || r.PathValue("attemptId") != "0" {
		writeJSONError(w, http.StatusNotFound, "unknown stage: "+raw+" attempt "+r.PathValue("attemptId"))
		return
	}
	q := r.URL.Query()
	tq := taskQuery{Sort: colTaskID, Length: 20}
	for _, p := range []struct {
		name string
		to   *int
	}{{"offset", &tq.Offset}, {"length", &tq.Length}} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		v, err := strconv.Atoi(raw)
		if err != nil || v < 0 {
			writeJSONError(w, http.StatusBadRequest, p.name+" must be an integer of at least 0, not "+raw)
			return
		}
		*p.to = v
	}
	tq.Length = min(tq.Length, maxTaskPageSize)
	// Spark's TaskSorting.fromString: runtime and -runtime in any case,
	// else the enum's names, ignoring case.
	switch by := q.Get("sortBy"); strings.ToUpper(by) {
	case "", "ID":
	case "RUNTIME", "INCREASING_RUNTIME":
		tq.Sort = colRunTime
	case "-RUNTIME", "DECREASING_RUNTIME":
		tq.Sort, tq.Desc = colRunTime, true
	default:
		tq.Desc = by[0] == '-'
		tq.Sort = strings.TrimPrefix(by, "-")
		if !contains(taskColumns, tq.Sort) {
			writeJSONError(w, http.StatusBadRequest, "unknown sortBy: "+by)
			return
		}
	}
	tasks, _, _ := u.store.tasksPage(id, tq, u.now(u.store.Info()))
	out := make([]taskData, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, toTaskData(t))
	}
	writeJSON(w, out)
}
