// This file holds the decoding of a log's lines into events.

package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// line is the union of the fields of every event's line.
type line struct {
	Event           string            `json:"Event"`
	SparkVersion    string            `json:"Spark Version"`
	AppName         string            `json:"App Name"`
	AppID           string            `json:"App ID"`
	AttemptID       string            `json:"App Attempt ID"`
	Timestamp       int64             `json:"Timestamp"`
	User            string            `json:"User"`
	DriverHostPort  string            `json:"Driver Host Port"`
	DriverLogs      map[string]string `json:"Driver Logs"`
	Runtime         map[string]string `json:"Runtime Information"`
	SparkProperties map[string]string `json:"Spark Properties"`
	Error           string            `json:"Error"`
	ExecutorID      string            `json:"Executor ID"`
	ExecutorInfo    *struct {
		Host       string            `json:"Host"`
		TotalCores int               `json:"Total Cores"`
		LogURLs    map[string]string `json:"Log Urls"`
		Attributes map[string]string `json:"Attributes"`
		Address    string            `json:"RPC Address"`
	} `json:"Executor Info"`
	RemovedReason string `json:"Removed Reason"`
	JobID         *int64 `json:"Job ID"`
	// Spark's: a task's stage ("Stage ID"), and a job's stages ("Stage
	// IDs", "Stage Infos"), by which a Spark log's tasks are the jobs'.
	StageID        *int64      `json:"Stage ID"`
	StageIDs       []int64     `json:"Stage IDs"`
	StageInfos     []stageInfo `json:"Stage Infos"`
	SubmissionTime int64       `json:"Submission Time"`
	CompletionTime int64       `json:"Completion Time"`
	Duration       int64       `json:"Duration"`
	TaskName       string      `json:"Task Name"`
	NumTasks       int         `json:"Number of Tasks"`
	JobResult      *struct {
		Result    string `json:"Result"`
		Exception struct {
			Message string `json:"Message"`
		} `json:"Exception"`
	} `json:"Job Result"`
	TaskEndReason *struct {
		Reason      string `json:"Reason"`
		Description string `json:"Description"`
		KillReason  string `json:"Kill Reason"`
		LossReason  string `json:"Loss Reason"`
	} `json:"Task End Reason"`
	TaskInfo *struct {
		TaskID     int64  `json:"Task ID"`
		Index      int    `json:"Index"`
		Attempt    int    `json:"Attempt"`
		LaunchTime int64  `json:"Launch Time"`
		ExecutorID string `json:"Executor ID"`
		FinishTime int64  `json:"Finish Time"`
	} `json:"Task Info"`
	TaskMetrics *struct {
		RunTime    int64 `json:"Executor Run Time"`
		ResultSize int64 `json:"Result Size"`
	} `json:"Task Metrics"`
}

// errMissing is a line without a field its event needs.
var errMissing = errors.New("missing field")

// MaxTasks bounds the counts and indices a line may carry (a job's
// "Number of Tasks", a task's "Index" and "Attempt"): a hundred million,
// a thousand times Spark's default spark.ui.retainedTasks. A line over it
// is refused (ErrOutOfRange), so that no reader sizes anything from a
// hostile or corrupt log.
const MaxTasks = 100_000_000

// maxMillis bounds times and durations in milliseconds: those whose
// nanoseconds fit an int64 (up to the year 2262), as readers keep them.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// ErrOutOfRange is the Err of a Problem for a line with a value no log of
// a real application has: a negative id, count, size, duration or time, a
// count or index over MaxTasks, a time past the year 2262, or a task that
// finished before it was launched. The line is skipped.
var ErrOutOfRange = errors.New("eventlog: value out of range")

// bounded is a numeric field of a line and its allowed maximum.
type bounded struct {
	name string
	v    int64
	max  int64
}

// check refuses a line with a field out of its range (ErrOutOfRange).
func (l *line) check() error {
	fs := []bounded{{"Timestamp", l.Timestamp, maxMillis}, {"Submission Time", l.SubmissionTime, maxMillis},
		{"Completion Time", l.CompletionTime, maxMillis}, {"Duration", l.Duration, maxMillis},
		{"Number of Tasks", int64(l.NumTasks), MaxTasks}}
	if l.JobID != nil {
		fs = append(fs, bounded{"Job ID", *l.JobID, math.MaxInt64})
	}
	if l.StageID != nil {
		fs = append(fs, bounded{"Stage ID", *l.StageID, math.MaxInt64})
	}
	for _, s := range l.StageIDs {
		if s < 0 {
			return fmt.Errorf("%s: %w: \"Stage IDs\" holds %d", l.Event, ErrOutOfRange, s)
		}
	}
	var stageTasks int64
	for _, si := range l.StageInfos {
		fs = append(fs, bounded{"Number of Tasks", int64(si.NumTasks), MaxTasks})
		stageTasks += max(int64(si.NumTasks), 0)
		if stageTasks > MaxTasks {
			return fmt.Errorf("%s: %w: the stages' \"Number of Tasks\" add up to over %d", l.Event, ErrOutOfRange, MaxTasks)
		}
	}
	if e := l.ExecutorInfo; e != nil {
		fs = append(fs, bounded{"Total Cores", int64(e.TotalCores), math.MaxInt32})
	}
	if ti := l.TaskInfo; ti != nil {
		fs = append(fs, bounded{"Task ID", ti.TaskID, math.MaxInt64}, bounded{"Index", int64(ti.Index), MaxTasks},
			bounded{"Attempt", int64(ti.Attempt), MaxTasks}, bounded{"Launch Time", ti.LaunchTime, maxMillis},
			bounded{"Finish Time", ti.FinishTime, maxMillis})
		if ti.LaunchTime > 0 && ti.FinishTime > 0 && ti.FinishTime < ti.LaunchTime {
			return fmt.Errorf("%s: %w: \"Finish Time\" %d before \"Launch Time\" %d", l.Event, ErrOutOfRange,
				ti.FinishTime, ti.LaunchTime)
		}
	}
	if m := l.TaskMetrics; m != nil {
		fs = append(fs, bounded{"Executor Run Time", m.RunTime, maxMillis}, bounded{"Result Size", m.ResultSize, math.MaxInt64})
	}
	for _, f := range fs {
		if f.v < 0 || f.v > f.max {
			return fmt.Errorf("%s: %w: %q = %d", l.Event, ErrOutOfRange, f.name, f.v)
		}
	}
	return nil
}

// decoder turns lines into events. It remembers the version of the last
// SparkListenerLogStart, which ApplicationStart carries, and the job of
// the stages of the jobs started last, by which a Spark log's task lines
// (which name their stage, not their job) are their job's.
type decoder struct {
	version string
	stages  map[int64]stageJob // stage id -> its job
	order   []int64            // the stage ids remembered, a ring from next
	next    int
	live    map[int64]*liveJob // the Spark jobs started and not ended
	pending int                // the stages of live that ran no task yet
}

// decode returns the event of one line; ok is false for a line of an event
// it does not know (SparkListenerLogStart, or Spark's own events).
func (d *decoder) decode(b []byte) (ev endpoints.Event, ok bool, err error) {
	if unknownEvent(b) {
		return nil, false, nil
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, false, err
	}
	if err := l.check(); err != nil {
		return nil, false, err
	}
	switch l.Event {
	case eventLogStart:
		d.version = l.SparkVersion
		return nil, false, nil
	case eventApplicationStart:
		return endpoints.ApplicationStart{Time: millis(l.Timestamp), AppID: l.AppID, AttemptID: l.AttemptID,
			AppName: l.AppName, User: l.User, Version: d.version, DriverHostPort: l.DriverHostPort,
			DriverLogURLs: l.DriverLogs}, true, nil
	case eventEnvironmentUpdate:
		props := make([][2]string, 0, len(l.SparkProperties))
		for k, v := range l.SparkProperties {
			props = append(props, [2]string{k, v})
		}
		sort.Slice(props, func(i, j int) bool { return props[i][0] < props[j][0] })
		return endpoints.EnvironmentUpdate{Time: millis(l.Timestamp), Properties: props, Runtime: l.Runtime}, true, nil
	case eventApplicationEnd:
		return endpoints.ApplicationEnd{Time: millis(l.Timestamp), Error: l.Error}, true, nil
	case eventExecutorAdded:
		return decodeExecutorAdded(&l)
	case eventExecutorRemoved:
		return endpoints.ExecutorRemoved{Time: millis(l.Timestamp), ExecutorID: l.ExecutorID, Reason: l.RemovedReason}, true, nil
	case eventJobStart:
		if l.JobID == nil {
			return nil, false, fmt.Errorf("%s: %w \"Job ID\"", l.Event, errMissing)
		}
		n, stageTasks := l.NumTasks, d.startJob(*l.JobID, l.StageIDs, l.StageInfos)
		if n == 0 { // Spark's: its stages' tasks
			n = stageTasks
		}
		name := l.TaskName
		if name == "" { // Spark's: its last stage's
			name = sparkJobName(l.StageInfos)
		}
		return endpoints.JobStart{Time: millis(l.SubmissionTime), JobID: *l.JobID, TaskName: name,
			NumTasks: n}, true, nil
	case eventJobEnd:
		ev, ok, err := decodeJobEnd(&l)
		if end, isEnd := ev.(endpoints.JobEnd); isEnd && err == nil {
			end.SkippedTasks = d.endJob(end.JobID)
			ev = end
		}
		return ev, ok, err
	case eventTaskStart, eventTaskEnd:
		job, ok := d.taskJob(&l)
		if !ok {
			return nil, false, fmt.Errorf("%s: %w \"Job ID\" (or the \"Stage ID\" of a job started)", l.Event, errMissing)
		}
		l.JobID = &job.id
		if l.TaskInfo != nil && job.offset > 0 {
			// A Spark task's "Index" is its stage's: the job's tasks
			// are its stages' in turn.
			l.TaskInfo.Index += job.offset
		}
		return decodeTask(&l)
	}
	return nil, false, nil
}

func decodeExecutorAdded(l *line) (endpoints.Event, bool, error) {
	if l.ExecutorInfo == nil {
		return nil, false, fmt.Errorf("%s: %w \"Executor Info\"", l.Event, errMissing)
	}
	ev := endpoints.ExecutorAdded{Time: millis(l.Timestamp), ExecutorID: l.ExecutorID, Host: l.ExecutorInfo.Host,
		Cores: l.ExecutorInfo.TotalCores, LogURLs: l.ExecutorInfo.LogURLs, Attributes: l.ExecutorInfo.Attributes}
	if a := l.ExecutorInfo.Address; a != "" {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return nil, false, fmt.Errorf("%s: \"RPC Address\": %w", l.Event, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, false, fmt.Errorf("%s: \"RPC Address\": %w", l.Event, err)
		}
		ev.Address = actor.NewRpcAddress(host, p)
	}
	return ev, true, nil
}

func decodeJobEnd(l *line) (endpoints.Event, bool, error) {
	if l.JobID == nil || l.JobResult == nil {
		return nil, false, fmt.Errorf("%s: %w \"Job ID\" or \"Job Result\"", l.Event, errMissing)
	}
	ev := endpoints.JobEnd{Time: millis(l.CompletionTime), JobID: *l.JobID, Duration: time.Duration(l.Duration) * time.Millisecond}
	if l.JobResult.Result != "JobSucceeded" {
		ev.Err = errors.New(l.JobResult.Exception.Message)
	}
	return ev, true, nil
}

func decodeTask(l *line) (endpoints.Event, bool, error) {
	if l.JobID == nil || l.TaskInfo == nil {
		return nil, false, fmt.Errorf("%s: %w \"Job ID\" or \"Task Info\"", l.Event, errMissing)
	}
	ti := l.TaskInfo
	if l.Event == eventTaskStart {
		return endpoints.TaskStart{Time: millis(ti.LaunchTime), JobID: *l.JobID, TaskID: ti.TaskID, Partition: ti.Index,
			Attempt: ti.Attempt, ExecutorID: ti.ExecutorID}, true, nil
	}
	if l.TaskEndReason == nil {
		return nil, false, fmt.Errorf("%s: %w \"Task End Reason\"", l.Event, errMissing)
	}
	ev := endpoints.TaskEnd{Time: millis(ti.FinishTime), JobID: *l.JobID, TaskID: ti.TaskID, Partition: ti.Index,
		Attempt: ti.Attempt, ExecutorID: ti.ExecutorID}
	if ti.LaunchTime > 0 && ti.FinishTime > 0 {
		ev.Duration = time.Duration(ti.FinishTime-ti.LaunchTime) * time.Millisecond
	}
	switch r := l.TaskEndReason; r.Reason {
	case reasonSuccess:
		ev.State = messages.TaskState_TASK_STATE_FINISHED
	case reasonKilled:
		ev.State, ev.Error = messages.TaskState_TASK_STATE_KILLED, r.KillReason
	case reasonExecutorLost:
		ev.State, ev.Error = messages.TaskState_TASK_STATE_LOST, r.LossReason
	default:
		ev.State, ev.Error = messages.TaskState_TASK_STATE_FAILED, r.Description
	}
	if m := l.TaskMetrics; m != nil {
		ev.RunTime, ev.ResultSize = time.Duration(m.RunTime)*time.Millisecond, m.ResultSize
	}
	return ev, true, nil
}

// millis returns the time of ms epoch milliseconds; 0 (or a field the
// line does not have) is unknown: the zero time.Time, not 1970.
func millis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
