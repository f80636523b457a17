package endpoints

// This file holds the events the driver publishes and the Listener interface
// that receives them.

import (
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Event is something the driver publishes on its listener bus: one of
// ExecutorAdded, ExecutorRemoved, TaskStart, TaskEnd, JobStart, JobEnd,
// or one of the application's events that whoever runs the driver posts
// with Driver.PostEvent: ApplicationStart, EnvironmentUpdate,
// ApplicationEnd.
type Event interface {
	// When returns when the event happened.
	When() time.Time
	isEvent()
}

// ExecutorAdded is published when the driver registered an executor.
type ExecutorAdded struct {
	Time       time.Time // when it registered
	ExecutorID string
	Host       string           // the host it registered with
	Address    actor.RpcAddress // its env's address, as the driver sees it
	Cores      int              // the cores it registered with
	// LogURLs are where its logs can be read, by name ("stdout", ...):
	// those it registered with, or built from
	// spark.ui.custom.executor.log.url (see ExecutorLogURLs).
	LogURLs map[string]string
	// Attributes are those it registered with (Spark's executor
	// attributes: APP_ID, EXECUTOR_ID, KUBERNETES_POD_NAME, ...).
	Attributes map[string]string
}

// ExecutorRemoved is published when the driver removed an executor.
type ExecutorRemoved struct {
	Time       time.Time // when it was removed
	ExecutorID string
	Reason     string // the loss reason, e.g. ReasonKilled or ReasonDisassociated
}

// TaskStart is published when the driver launched a task.
type TaskStart struct {
	Time       time.Time // when its LaunchTask was built
	JobID      int64
	TaskID     int64  // the attempt's id, unique in the driver (Driver.KillTask takes it)
	Partition  int    // the index of the task's payload in the job
	Attempt    int    // 0 for the first attempt of the partition
	ExecutorID string // the executor that runs it
}

// TaskEnd is published when a task attempt ended: State is FINISHED, FAILED,
// KILLED or LOST (its executor was lost), Error the reason when it did not
// finish.
type TaskEnd struct {
	Time time.Time // when the driver learnt of the end
	// JobID, TaskID, Partition, Attempt and ExecutorID are those of the
	// attempt's TaskStart.
	JobID      int64
	TaskID     int64
	Partition  int
	Attempt    int
	ExecutorID string
	State      messages.TaskState
	Error      string
	Duration   time.Duration // from TaskStart to the end
	// ResultSize is the size of a FINISHED task's result in bytes.
	ResultSize int64
	// RunTime is how long the task's function ran on its executor, as the
	// executor measured it (Spark's executorRunTime); 0 when the executor
	// did not say (a task that never ran, or an executor that was lost).
	RunTime time.Duration
}

// JobStart is published when RunJob submitted a job.
type JobStart struct {
	Time     time.Time // when RunJob submitted it
	JobID    int64     // unique in the driver, from 0
	TaskName string    // the registered task function it runs
	NumTasks int       // one per payload
}

// JobEnd is published when a job ended; Err is nil when it succeeded.
type JobEnd struct {
	Time     time.Time // when it ended
	JobID    int64
	Err      error         // nil for a job that succeeded
	Duration time.Duration // from JobStart to the end
	// SkippedTasks are the tasks among its JobStart's NumTasks that it
	// did not run: those of a Spark job's stages computed before (Spark's
	// skipped stages); 0 for a job of sparkrpc's.
	SkippedTasks int
}

// ApplicationStart is posted once, before any other event, by whoever runs
// the driver (Spark's SparkListenerApplicationStart).
type ApplicationStart struct {
	Time      time.Time // when the application started
	AppID     string
	AttemptID string // "" for the first attempt or a master without attempts
	AppName   string
	User      string
	// Version is the version of the program that runs the driver.
	Version string
	// DriverHostPort is the driver's env's address ("host:port").
	DriverHostPort string
	// DriverLogURLs are where the driver's output can be read, by name
	// ("stdout", "stderr"); empty when nothing serves them.
	DriverLogURLs map[string]string
}

// EnvironmentUpdate is posted once, after ApplicationStart, with the
// application's effective configuration (Spark's
// SparkListenerEnvironmentUpdate). Properties are as a listener may show
// or write them: sorted by key, sensitive values already redacted.
type EnvironmentUpdate struct {
	Time       time.Time
	Properties [][2]string
	// Runtime describes the driver's runtime: "Go Version", "Platform"
	// and the like.
	Runtime map[string]string
}

// ApplicationEnd is posted once, last, when the application has returned
// (Spark's SparkListenerApplicationEnd). Error is "" when it succeeded.
type ApplicationEnd struct {
	Time  time.Time
	Error string
}

// When implements Event.
func (e ApplicationStart) When() time.Time { return e.Time }

// When implements Event.
func (e EnvironmentUpdate) When() time.Time { return e.Time }

// When implements Event.
func (e ApplicationEnd) When() time.Time { return e.Time }

// When implements Event.
func (e ExecutorAdded) When() time.Time { return e.Time }

// When implements Event.
func (e ExecutorRemoved) When() time.Time { return e.Time }

// When implements Event.
func (e TaskStart) When() time.Time { return e.Time }

// When implements Event.
func (e TaskEnd) When() time.Time { return e.Time }

// When implements Event.
func (e JobStart) When() time.Time { return e.Time }

// When implements Event.
func (e JobEnd) When() time.Time { return e.Time }

func (ExecutorAdded) isEvent()   {}
func (ExecutorRemoved) isEvent() {}
func (TaskStart) isEvent()       {}
func (TaskEnd) isEvent()         {}
func (JobStart) isEvent()        {}
func (JobEnd) isEvent()          {}

func (ApplicationStart) isEvent()  {}
func (EnvironmentUpdate) isEvent() {}
func (ApplicationEnd) isEvent()    {}

// Listener receives the events of a driver's listener bus, one at a time,
// in the order they were posted, on the bus's own goroutine. A slow listener
// delays the other listeners, never the driver. A panic in OnEvent is logged
// and ignored.
type Listener interface {
	OnEvent(ev Event)
}

// ListenerFunc adapts a function to a Listener.
type ListenerFunc func(ev Event)

// OnEvent calls f.
func (f ListenerFunc) OnEvent(ev Event) { f(ev) }

// NewLogListener returns a listener that logs every event to l (executor
// and job events at info level, task events at debug level), with the field
// component=listener.
func NewLogListener(l zerolog.Logger) Listener {
	log := l.With().Str("component", "listener").Logger()
	return ListenerFunc(func(ev Event) {
		switch e := ev.(type) {
		case ExecutorAdded:
			log.Info().Str("executor", e.ExecutorID).Str("host", e.Host).Str("address", e.Address.String()).
				Int("cores", e.Cores).Msg("Executor added")
		case ExecutorRemoved:
			log.Info().Str("executor", e.ExecutorID).Str("reason", e.Reason).Msg("Executor removed")
		case TaskStart:
			log.Debug().Int64("job", e.JobID).Int64("tid", e.TaskID).Int("partition", e.Partition).
				Int("attempt", e.Attempt).Str("executor", e.ExecutorID).Msg("Task started")
		case TaskEnd:
			lev := log.Debug()
			if e.State != messages.TaskState_TASK_STATE_FINISHED {
				lev = log.Warn()
			}
			lev.Int64("job", e.JobID).Int64("tid", e.TaskID).Int("partition", e.Partition).
				Int("attempt", e.Attempt).Str("executor", e.ExecutorID).Str("state", stateName(e.State)).
				Str("error", e.Error).Dur("duration", e.Duration).Msg("Task ended")
		case JobStart:
			log.Info().Int64("job", e.JobID).Str("task", e.TaskName).Int("tasks", e.NumTasks).Msg("Job started")
		case JobEnd:
			lev := log.Info()
			if e.Err != nil {
				lev = log.Error().Err(e.Err)
			}
			lev.Int64("job", e.JobID).Dur("duration", e.Duration).Msg("Job ended")
		}
	})
}

// stateName returns "FINISHED" for TASK_STATE_FINISHED and so on.
func stateName(s messages.TaskState) string {
	n := s.String()
	const prefix = "TASK_STATE_"
	if len(n) > len(prefix) && n[:len(prefix)] == prefix {
		return n[len(prefix):]
	}
	return n
}
