package endpoints

// This file holds the configuration of dynamic allocation: its keys, with
// Spark's names and defaults, AllocationConfig, and the initial number of
// executors a cluster manager starts with when it is on.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// Configuration keys of dynamic allocation (ExecutorAllocationManager), with
// Spark's names and defaults. A bare number of a timeout is in seconds.
const (
	// KeyDynamicAllocationEnabled turns dynamic allocation on (default
	// false): the driver asks its cluster manager for executors as the task
	// backlog persists and releases idle ones.
	KeyDynamicAllocationEnabled = "spark.dynamicAllocation.enabled"
	// KeyDynamicAllocationMinExecutors is the fewest executors kept (default 0).
	KeyDynamicAllocationMinExecutors = "spark.dynamicAllocation.minExecutors"
	// KeyDynamicAllocationMaxExecutors is the most executors asked for
	// (default: no bound).
	KeyDynamicAllocationMaxExecutors = "spark.dynamicAllocation.maxExecutors"
	// KeyDynamicAllocationInitialExecutors is the number of executors the
	// application starts with (default minExecutors; raised to
	// spark.executor.instances when that is set and larger).
	KeyDynamicAllocationInitialExecutors = "spark.dynamicAllocation.initialExecutors"
	// KeyDynamicAllocationExecutorIdleTimeout is how long an executor may
	// run no task before it is released (default 60s).
	KeyDynamicAllocationExecutorIdleTimeout = "spark.dynamicAllocation.executorIdleTimeout"
	// KeyDynamicAllocationSchedulerBacklogTimeout is how long tasks must
	// wait for a core before the first executors are asked for (default 1s).
	KeyDynamicAllocationSchedulerBacklogTimeout = "spark.dynamicAllocation.schedulerBacklogTimeout"
	// KeyDynamicAllocationSustainedBacklogTimeout is the interval between
	// later requests while the backlog lasts (default
	// schedulerBacklogTimeout).
	KeyDynamicAllocationSustainedBacklogTimeout = "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout"
	// KeyDynamicAllocationExecutorAllocationRatio scales the executors the
	// backlog needs (default 1: one core per waiting or running task; 0.5
	// asks for half as many).
	KeyDynamicAllocationExecutorAllocationRatio = "spark.dynamicAllocation.executorAllocationRatio"
)

// keyExecutorInstances is spark.executor.instances (cluster.KeyNumExecutors,
// which this package cannot import); keyExecutorCores is
// spark.executor.cores.
const (
	keyExecutorInstances = "spark.executor.instances"
	keyExecutorCores     = "spark.executor.cores"
)

// AllocationConfig is dynamic allocation's configuration, read by
// ParseAllocationConfig from the spark.dynamicAllocation.* keys.
type AllocationConfig struct {
	// Enabled is spark.dynamicAllocation.enabled.
	Enabled bool
	// MinExecutors, MaxExecutors and InitialExecutors bound the target.
	MinExecutors, MaxExecutors, InitialExecutors int
	// IdleTimeout is how long an executor may run no task before it is
	// released.
	IdleTimeout time.Duration
	// BacklogTimeout is how long tasks wait before the first request;
	// SustainedBacklogTimeout the interval between later ones.
	BacklogTimeout, SustainedBacklogTimeout time.Duration
	// AllocationRatio scales the executors the backlog needs, in (0, 1].
	AllocationRatio float64
	// TasksPerExecutor is how many tasks one executor runs at once
	// (spark.executor.cores / spark.task.cpus, at least 1).
	TasksPerExecutor int
}

// ParseAllocationConfig reads dynamic allocation's keys from conf and
// checks them as Spark does: minExecutors and maxExecutors not negative,
// maxExecutors not 0 and not below minExecutors, initialExecutors within
// them, timeouts positive (the idle timeout may be 0), the ratio in (0, 1].
// InitialExecutors is then raised to spark.executor.instances when that is
// set and larger (see InitialExecutors), as in Spark, but not above
// maxExecutors. An error wraps ErrInvalidConfig or an *actor.ConfError.
func ParseAllocationConfig(conf *actor.Conf) (AllocationConfig, error) {
	var c AllocationConfig
	var err error
	if c.Enabled, err = conf.GetBool(KeyDynamicAllocationEnabled, false); err != nil {
		return c, err
	}
	if c.MinExecutors, err = conf.GetInt(KeyDynamicAllocationMinExecutors, 0); err != nil {
		return c, err
	}
	if c.MaxExecutors, err = conf.GetInt(KeyDynamicAllocationMaxExecutors, math.MaxInt32); err != nil {
		return c, err
	}
	if c.InitialExecutors, err = conf.GetInt(KeyDynamicAllocationInitialExecutors, c.MinExecutors); err != nil {
		return c, err
	}
	if err := c.parseTimes(conf); err != nil {
		return c, err
	}
	if err := c.parseTasksPerExecutor(conf); err != nil {
		return c, err
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	if n, ok, err := executorInstances(conf); err != nil {
		return c, err
	} else if ok {
		// Never above maxExecutors: the target never is, and
		// NewExecutorAllocationManager refuses an initial target above it.
		c.InitialExecutors = min(max(c.InitialExecutors, n), c.MaxExecutors)
	}
	return c, nil
}

// parseTimes reads the timeouts and the allocation ratio.
func (c *AllocationConfig) parseTimes(conf *actor.Conf) error {
	var err error
	if c.IdleTimeout, err = conf.GetDuration(KeyDynamicAllocationExecutorIdleTimeout, "60s", time.Second); err != nil {
		return err
	}
	if c.BacklogTimeout, err = conf.GetDuration(KeyDynamicAllocationSchedulerBacklogTimeout, "1s", time.Second); err != nil {
		return err
	}
	sustained := conf.Get(KeyDynamicAllocationSustainedBacklogTimeout, conf.Get(KeyDynamicAllocationSchedulerBacklogTimeout, "1s"))
	if c.SustainedBacklogTimeout, err = actor.ParseTime(sustained, time.Second); err != nil {
		return &actor.ConfError{Key: KeyDynamicAllocationSustainedBacklogTimeout, Value: sustained, Err: err}
	}
	c.AllocationRatio = 1
	if v, ok := conf.Lookup(KeyDynamicAllocationExecutorAllocationRatio); ok {
		if c.AllocationRatio, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return &actor.ConfError{Key: KeyDynamicAllocationExecutorAllocationRatio, Value: v, Err: err}
		}
	}
	return nil
}

// parseTasksPerExecutor reads spark.executor.cores (default 1) and
// spark.task.cpus.
func (c *AllocationConfig) parseTasksPerExecutor(conf *actor.Conf) error {
	cores, err := conf.GetInt(keyExecutorCores, 1)
	if err != nil {
		return err
	}
	cpus, err := conf.GetInt(KeyTaskCpus, 1)
	if err != nil {
		return err
	}
	c.TasksPerExecutor = max(1, cores/max(1, cpus))
	return nil
}

// validate checks c as Spark's ExecutorAllocationManager.validateSettings.
func (c *AllocationConfig) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.MinExecutors < 0 || c.MaxExecutors < 0:
		return bad("%s and %s must not be negative", KeyDynamicAllocationMinExecutors, KeyDynamicAllocationMaxExecutors)
	case c.MaxExecutors == 0:
		return bad("%s cannot be 0", KeyDynamicAllocationMaxExecutors)
	case c.MinExecutors > c.MaxExecutors:
		return bad("%s (%d) must be less than or equal to %s (%d)", KeyDynamicAllocationMinExecutors, c.MinExecutors,
			KeyDynamicAllocationMaxExecutors, c.MaxExecutors)
	case c.InitialExecutors < c.MinExecutors || c.InitialExecutors > c.MaxExecutors:
		return bad("%s (%d) must be between %s (%d) and %s (%d)", KeyDynamicAllocationInitialExecutors, c.InitialExecutors,
			KeyDynamicAllocationMinExecutors, c.MinExecutors, KeyDynamicAllocationMaxExecutors, c.MaxExecutors)
	case c.BacklogTimeout <= 0:
		return bad("%s must be > 0", KeyDynamicAllocationSchedulerBacklogTimeout)
	case c.SustainedBacklogTimeout <= 0:
		return bad("%s must be > 0", KeyDynamicAllocationSustainedBacklogTimeout)
	case c.IdleTimeout < 0:
		return bad("%s must be >= 0", KeyDynamicAllocationExecutorIdleTimeout)
	case !(c.AllocationRatio > 0 && c.AllocationRatio <= 1):
		return bad("%s must be > 0 and <= 1.0", KeyDynamicAllocationExecutorAllocationRatio)
	}
	return nil
}

// executorInstances returns spark.executor.instances when it is set.
func executorInstances(conf *actor.Conf) (int, bool, error) {
	if _, ok := conf.Lookup(keyExecutorInstances); !ok {
		return 0, false, nil
	}
	n, err := conf.GetInt(keyExecutorInstances, 0)
	return n, err == nil, err
}

// InitialExecutors returns the number of executors an application of conf
// starts with when dynamic allocation is on (Spark's
// getInitialTargetExecutorNumber): the largest of minExecutors,
// initialExecutors and spark.executor.instances (when set). warning is
// not empty when spark.executor.instances raised it, as Spark warns. ok is
// false when dynamic allocation is off: the cluster manager then starts
// spark.executor.instances executors.
func InitialExecutors(conf *actor.Conf) (n int, warning string, ok bool, err error) {
	c, err := ParseAllocationConfig(conf)
	if err != nil || !c.Enabled {
		return 0, "", false, err
	}
	initial, err := conf.GetInt(KeyDynamicAllocationInitialExecutors, c.MinExecutors)
	if err != nil {
		return 0, "", false, err
	}
	if c.InitialExecutors > max(initial, c.MinExecutors) {
		instances, _, _ := executorInstances(conf)
		warning = fmt.Sprintf("Dynamic allocation is enabled and %s (%d) is larger than %s (%d): the application "+
			"starts with %d executors", keyExecutorInstances, instances, KeyDynamicAllocationInitialExecutors,
			initial, c.InitialExecutors)
		if instances > c.MaxExecutors {
			warning += fmt.Sprintf(" (%s)", KeyDynamicAllocationMaxExecutors)
		}
	}
	return c.InitialExecutors, warning, true, nil
}
