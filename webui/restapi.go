package webui

// This file holds the driver's REST API: a subset of Spark's /api/v1
// (ApplicationInfo, ExecutorSummary, JobData), with Spark's JSON field
// names.

import (
	"net/http"
	"strconv"
	"time"
)

// sparkTime formats t as Spark's REST API does: "2015-02-03T16:42:59.720GMT".
func sparkTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000") + "GMT"
}

// applicationInfo is Spark's ApplicationInfo.
type applicationInfo struct {
	ID       string                   `json:"id"`
	Name     string                   `json:"name"`
	Attempts []applicationAttemptInfo `json:"attempts"`
}

// applicationAttemptInfo is Spark's ApplicationAttemptInfo.
type applicationAttemptInfo struct {
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
	LastHeartbeat     string            `json:"lastHeartbeat,omitempty"` // sparkrpc's addition
	LastHeartbeatTime int64             `json:"lastHeartbeatEpoch,omitempty"`
}

// jobData is the subset of Spark's JobData that sparkrpc has (one stage
// per job, so no stage figures).
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

func (u *DriverUI) applicationInfo() applicationInfo {
	now := time.Now()
	a := applicationAttemptInfo{StartTime: sparkTime(u.app.Start), EndTime: sparkTime(time.Unix(0, 0)),
		LastUpdated: sparkTime(now), Duration: now.Sub(u.app.Start).Milliseconds(), SparkUser: u.app.User,
		AppSparkVersion: u.app.Version, StartTimeEpoch: u.app.Start.UnixMilli(), EndTimeEpoch: -1,
		LastUpdatedEpoch: now.UnixMilli()}
	return applicationInfo{ID: u.appID(), Name: u.app.Name, Attempts: []applicationAttemptInfo{a}}
}

func summarize(ex executorStatus) executorSummary {
	s := executorSummary{ID: ex.ID, HostPort: ex.HostPort, IsActive: ex.IsActive(), TotalCores: ex.Cores,
		MaxTasks: ex.Cores, ActiveTasks: ex.Active, FailedTasks: ex.Failed, CompletedTasks: ex.Completed,
		TotalTasks: ex.Active + ex.Failed + ex.Completed, TotalDuration: ex.TotalDuration.Milliseconds(),
		AddTime: sparkTime(ex.AddTime), RemoveTime: sparkTime(ex.RemoveTime), RemoveReason: ex.RemoveReason,
		ExecutorLogs: ex.LogURLs, LastHeartbeat: sparkTime(ex.LastHeartbeat)}
	if s.ExecutorLogs == nil {
		s.ExecutorLogs = map[string]string{}
	}
	if !ex.LastHeartbeat.IsZero() {
		s.LastHeartbeatTime = ex.LastHeartbeat.UnixMilli()
	}
	return s
}

func toJobData(j jobStatus) jobData {
	return jobData{JobID: j.ID, Name: j.Name, SubmissionTime: sparkTime(j.Submitted), CompletionTime: sparkTime(j.Ended),
		StageIDs: []int{}, Status: j.Status, NumTasks: j.NumTasks, NumActiveTasks: j.Active,
		NumCompletedTasks: j.Completed, NumFailedTasks: j.Failed, NumKilledTasks: j.Killed,
		NumCompletedIndices: j.CompletedIndices, FailureReason: j.Error}
}

// apiApp checks the {id} of an /api/v1/applications/{id}/... path: false
// (after writing 404) when it is not this application.
func (u *DriverUI) apiApp(w http.ResponseWriter, r *http.Request) bool {
	if id := r.PathValue("id"); id == "" || id != u.appID() {
		writeJSONError(w, http.StatusNotFound, "unknown app: "+id)
		return false
	}
	return true
}

func (u *DriverUI) apiApplications(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, []applicationInfo{u.applicationInfo()})
}

func (u *DriverUI) apiApplication(w http.ResponseWriter, r *http.Request) {
	if u.apiApp(w, r) {
		writeJSON(w, u.applicationInfo())
	}
}

// apiExecutors serves .../executors (active executors, as Spark) and
// .../allexecutors (removed ones too).
func (u *DriverUI) apiExecutors(all bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !u.apiApp(w, r) {
			return
		}
		out := []executorSummary{}
		for _, ex := range u.status.executorsSnapshot(u.d.LastHeartbeats()) {
			if all || ex.IsActive() {
				out = append(out, summarize(ex))
			}
		}
		writeJSON(w, out)
	}
}

func (u *DriverUI) apiJobs(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	want := r.URL.Query()["status"]
	out := []jobData{}
	for _, j := range u.status.jobsSnapshot() {
		if len(want) > 0 && !contains(want, j.Status) {
			continue
		}
		out = append(out, toJobData(j))
	}
	writeJSON(w, out)
}

func (u *DriverUI) apiJob(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	raw := r.PathValue("jobId")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		writeJSONError(w, http.StatusNotFound, "unknown job: "+raw)
		return
	}
	j, ok := u.status.job(id)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "unknown job: "+raw)
		return
	}
	writeJSON(w, toJobData(j))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
