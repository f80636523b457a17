package endpoints

// This file holds the package's sentinel and typed errors.

import (
	"errors"
	"fmt"
)

// Sentinel errors of the package.
var (
	// ErrDriverStopped is returned by RunJob once the driver is stopping,
	// and fails the jobs still running when it stops.
	ErrDriverStopped = errors.New("endpoints: driver stopped")
	// ErrUnknownTask is returned by RunJob for a task function that is not
	// registered, and is the reason of a task an executor cannot find.
	ErrUnknownTask = errors.New("endpoints: unknown task function")
	// ErrJobAborted matches every *JobAbortedError.
	ErrJobAborted = errors.New("endpoints: job aborted")
	// ErrTaskTooLarge is the cause of a *JobAbortedError for a task whose
	// LaunchTask message reaches spark.rpc.message.maxSize.
	ErrTaskTooLarge = errors.New("endpoints: serialized task exceeds spark.rpc.message.maxSize")
	// ErrTaskFailed is the cause of a *JobAbortedError for a task that
	// failed spark.task.maxFailures times.
	ErrTaskFailed = errors.New("endpoints: task failed too many times")
	// ErrResultTooLarge is the cause of a *JobAbortedError for a job whose
	// tasks' results add up to more than spark.driver.maxResultSize.
	ErrResultTooLarge = errors.New("endpoints: total size of results exceeds spark.driver.maxResultSize")
	// ErrNoEnvFactory is returned by RunExecutor without WithEnvFactory.
	ErrNoEnvFactory = errors.New("endpoints: no env factory (use WithEnvFactory)")
	// ErrInvalidConfig is returned for an unusable ExecutorConfig or option.
	ErrInvalidConfig = errors.New("endpoints: invalid configuration")
	// ErrDuplicateExecutor is the reason the driver refuses an executor whose
	// id is already registered ("Duplicate executor ID: ID").
	ErrDuplicateExecutor = errors.New("duplicate executor")
	// ErrNoClusterManager is returned by Driver.RequestTotalExecutors for a
	// driver without WithClusterManager.
	ErrNoClusterManager = errors.New("endpoints: no cluster manager (use WithClusterManager)")
	// ErrTaskNotRunning is returned by Driver.KillTask for a task id that is
	// not running.
	ErrTaskNotRunning = errors.New("endpoints: task not running")
	// ErrExecutorExcluded is the reason the driver refuses an executor on an
	// excluded host ("Executor is excluded due to failures: ID").
	ErrExecutorExcluded = errors.New("executor excluded")
	// ErrInvalidRegistration is the reason the driver refuses a
	// RegisterExecutor that cannot be one: an empty executor id, fewer
	// than one core, or a reference to an endpoint that is not on the
	// registering executor's own env.
	ErrInvalidRegistration = errors.New("invalid executor registration")
	// ErrNotTheExecutor is the error of an ask about an executor
	// (RemoveExecutor, ExecutorDecommissioning, Heartbeat) that comes from
	// another env than the one the executor registered from.
	ErrNotTheExecutor = errors.New("endpoints: the executor named is not the asker's")
	// ErrDynamicAllocation is returned by Driver.KillExecutors while an
	// ExecutorAllocationManager runs on the driver (as Spark's
	// "killExecutors() unsupported with Dynamic Allocation turned on"):
	// the manager owns the cluster manager's target, which a kill would
	// lower behind its back.
	ErrDynamicAllocation = errors.New("endpoints: killing executors is not supported with dynamic allocation on")
)

// JobAbortedError is the error of a job that could not complete: a task
// failed spark.task.maxFailures times (cause ErrTaskFailed) or was too
// large to send (cause ErrTaskTooLarge), or its results add up to more than
// spark.driver.maxResultSize (cause ErrResultTooLarge). Its text contains the reason, e.g.
// the last error of the failing task. (A job the driver's stop ends
// returns ErrDriverStopped.)
type JobAbortedError struct {
	JobID  int64  // the job's id (JobStart.JobID)
	Reason string // why, with the failing task's last error
	Err    error  // the cause: ErrTaskFailed or ErrTaskTooLarge
}

// Error returns "Job ID aborted due to stage failure: REASON".
func (e *JobAbortedError) Error() string {
	return fmt.Sprintf("Job %d aborted due to stage failure: %s", e.JobID, e.Reason)
}

// Is matches ErrJobAborted.
func (e *JobAbortedError) Is(target error) bool { return target == ErrJobAborted }

// Unwrap returns the cause.
func (e *JobAbortedError) Unwrap() error { return e.Err }

// ExitError is what RunExecutor returns when the executor did not stop
// cleanly: the exit code the executor process should exit with and why
// (Spark's exitExecutor). Code 1 is a failed registration or a lost driver;
// ExitCodeHeartbeatFailure a driver that stopped answering heartbeats.
type ExitError struct {
	Code   int    // the process's exit code
	Reason string // Spark's text, e.g. "Driver ADDR disassociated! Shutting down."
	Err    error  // the cause, or nil
}

// Error returns the exit code, the reason and the cause.
func (e *ExitError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("executor exited with code %d: %s: %v", e.Code, e.Reason, e.Err)
	}
	return fmt.Sprintf("executor exited with code %d: %s", e.Code, e.Reason)
}

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// registrationError is the failure the driver sends a refused executor.
type registrationError struct {
	kind error
	text string
}

func (e *registrationError) Error() string        { return e.text }
func (e *registrationError) Is(target error) bool { return target == e.kind }
