package webui

// This file holds what an AppStore keeps of an application (Spark's
// spark.ui.retained* keys): the defaults, the keys and the options.

import "github.com/sparkrpc/sparkrpc/actor"

// Retention defaults, Spark's.
const (
	// DefaultRetainedJobs is spark.ui.retainedJobs' default: ended jobs
	// kept, the oldest going first.
	DefaultRetainedJobs = 1000
	// DefaultRetainedTasks is spark.ui.retainedTasks' default: task
	// attempts kept per job (sparkrpc's stage), see WithRetainedTasks.
	DefaultRetainedTasks = 100000
	// DefaultRetainedDeadExecutors is spark.ui.retainedDeadExecutors'
	// default: removed executors kept, the oldest going first.
	DefaultRetainedDeadExecutors = 100
)

// Configuration keys of the store's retention (see StoreOptionsFromConf).
const (
	KeyRetainedJobs          = "spark.ui.retainedJobs"
	KeyRetainedTasks         = "spark.ui.retainedTasks"
	KeyRetainedDeadExecutors = "spark.ui.retainedDeadExecutors"
)

// StoreOption configures an AppStore.
type StoreOption func(*AppStore)

// WithRetainedJobs keeps at most n ended jobs (spark.ui.retainedJobs,
// default 1000); the oldest ended jobs, with their tasks, go first.
func WithRetainedJobs(n int) StoreOption { return func(s *AppStore) { s.retainedJobs = max(1, n) } }

// WithRetainedTasks keeps at most about n task attempts per job
// (spark.ui.retainedTasks, default 100000). As Spark's, when a job holds
// more, its oldest ended attempts are dropped, a tenth of n at least at a
// time so that dropping is rare; when it has too few ended ones (starts
// whose ends never come), its oldest running attempts go too, and their
// ends, when they come, are counted but not kept. The job's counts keep
// every attempt, and its page says how many were dropped.
func WithRetainedTasks(n int) StoreOption { return func(s *AppStore) { s.retainedTasks = max(1, n) } }

// WithRetainedDeadExecutors keeps at most n removed executors
// (spark.ui.retainedDeadExecutors, default 100), the oldest going first.
func WithRetainedDeadExecutors(n int) StoreOption {
	return func(s *AppStore) { s.retainedX = max(1, n) }
}

// StoreOptionsFromConf returns the store options that conf sets:
// spark.ui.retainedJobs, spark.ui.retainedTasks and
// spark.ui.retainedDeadExecutors.
func StoreOptionsFromConf(conf *actor.Conf) ([]StoreOption, error) {
	jobs, err := conf.GetInt(KeyRetainedJobs, DefaultRetainedJobs)
	if err != nil {
		return nil, err
	}
	tasks, err := conf.GetInt(KeyRetainedTasks, DefaultRetainedTasks)
	if err != nil {
		return nil, err
	}
	dead, err := conf.GetInt(KeyRetainedDeadExecutors, DefaultRetainedDeadExecutors)
	if err != nil {
		return nil, err
	}
	return []StoreOption{WithRetainedJobs(jobs), WithRetainedTasks(tasks), WithRetainedDeadExecutors(dead)}, nil
}
