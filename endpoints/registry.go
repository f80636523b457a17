package endpoints

// This file holds the registry of task functions (RegisterTask, LookupTask).

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
)

// TaskContext describes the task a TaskFunc runs.
type TaskContext struct {
	// TaskID is unique per driver and per attempt.
	TaskID int64
	// Attempt counts the runs of the partition, from 0.
	Attempt int
	// Partition is the index of the payload in the job.
	Partition int
	// ExecutorID is the executor the task runs on.
	ExecutorID string
	// JobID is the job the task belongs to.
	JobID int64
	// FilesDir is the executor's folder of the files the application added
	// (Driver.AddFile, submit's --files): Spark's SparkFiles root.
	FilesDir string
}

// File returns the path on the executor of the file the application added
// under name (its base name): Spark's SparkFiles.get.
func (tc TaskContext) File(name string) string {
	return filepath.Join(tc.FilesDir, filepath.Base(name))
}

// TaskFunc is a task: it turns a partition's payload into its result. It
// runs on an executor; ctx is cancelled when the task is killed (its job was
// cancelled or failed, or the executor is stopping). A returned error, or a
// panic, fails the attempt, which the driver retries up to
// spark.task.maxFailures times.
type TaskFunc func(ctx context.Context, tc TaskContext, payload []byte) ([]byte, error)

// Built-in task functions, registered by this package.
const (
	// NoopTaskName is a task that does nothing and returns no result.
	NoopTaskName = "sparkrpc.noop"
	// EchoTaskName is a task that returns its payload.
	EchoTaskName = "sparkrpc.echo"
)

var (
	registryMu sync.RWMutex
	registry   = make(map[string]TaskFunc)
)

func init() {
	RegisterTask(NoopTaskName, func(context.Context, TaskContext, []byte) ([]byte, error) { return nil, nil })
	RegisterTask(EchoTaskName, func(_ context.Context, _ TaskContext, p []byte) ([]byte, error) { return p, nil })
}

// RegisterTask makes fn runnable under name. Go cannot send closures to
// another process, so a job names its task function and every process (the
// driver and its executors, built from the same program) registers the same
// functions, typically in init, like database/sql drivers. It panics when
// name is empty, fn is nil or name is already registered.
func RegisterTask(name string, fn TaskFunc) {
	if name == "" {
		panic("endpoints: RegisterTask with an empty name")
	}
	if fn == nil {
		panic("endpoints: RegisterTask of a nil function for " + name)
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("endpoints: RegisterTask called twice for " + name)
	}
	registry[name] = fn
}

// LookupTask returns the task function registered under name.
func LookupTask(name string) (TaskFunc, bool) {
	registryMu.RLock()
	fn, ok := registry[name]
	registryMu.RUnlock()
	return fn, ok
}

// Tasks returns the names of the registered task functions, sorted.
func Tasks() []string {
	registryMu.RLock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	registryMu.RUnlock()
	slices.Sort(names)
	return names
}
