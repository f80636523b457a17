package endpoints

// This file holds the options of NewDriver and RunExecutor and the package's
// configuration keys.

import (
	"math/rand/v2"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
)

// Endpoint names, as in Spark.
const (
	// DriverEndpointName is the name of the driver's scheduler endpoint.
	DriverEndpointName = "CoarseGrainedScheduler"
	// ExecutorEndpointName is the name of an executor's backend endpoint.
	ExecutorEndpointName = "Executor"
	// HeartbeatEndpointName is the name of the driver's heartbeat receiver.
	HeartbeatEndpointName = "HeartbeatReceiver"
)

// Configuration keys read by this package, with Spark's names and defaults.
const (
	// KeyReviveInterval is how often the driver offers free cores to pending
	// tasks even when nothing happened (default 1s).
	KeyReviveInterval = "spark.scheduler.revive.interval"
	// KeyStarvationTimeout is how often a job that has launched no task
	// yet says so in the driver's log, as Spark's "Initial job has not
	// accepted any resources" (default 15s).
	KeyStarvationTimeout = "spark.starvation.timeout"
	// KeyTaskMaxFailures is how many times a task may fail before its job is
	// aborted (default 4).
	KeyTaskMaxFailures = "spark.task.maxFailures"
	// KeyTaskCpus is the number of cores each task holds (default 1).
	KeyTaskCpus = "spark.task.cpus"
	// KeyMaxResultSize bounds the total size of the results of one job's
	// tasks that the driver holds (default 1g; a bare number is in bytes;
	// 0: no limit). A job past it is aborted with ErrResultTooLarge, as
	// Spark aborts an action whose serialized results exceed it.
	KeyMaxResultSize = "spark.driver.maxResultSize"
	// KeyHeartbeatInterval is how often executors heartbeat (default 10s; a
	// bare number is in milliseconds).
	KeyHeartbeatInterval = "spark.executor.heartbeatInterval"
	// KeyHeartbeatMaxFailures is how many heartbeats in a row may fail
	// before an executor exits with code 56 (default 60).
	KeyHeartbeatMaxFailures = "spark.executor.heartbeat.maxFailures"
	// KeyHeartbeatTimeout is how long an executor may stay silent before the
	// driver removes it (default spark.network.timeout, else 120s).
	KeyHeartbeatTimeout = "spark.storage.blockManagerHeartbeatTimeoutMs"
	// KeyTimeoutInterval is how often the heartbeat receiver looks for
	// silent executors (default 60s; a bare number is in milliseconds).
	KeyTimeoutInterval = "spark.network.timeoutInterval"
)

// ExitCodeHeartbeatFailure is the exit code of an executor that could not
// heartbeat spark.executor.heartbeat.maxFailures times in a row (Spark's 56).
const ExitCodeHeartbeatFailure = 56

// EnvFactory creates the env of an executor process: the config fetcher and
// the executor's own env. It must return an env in client mode (one that
// does not listen) or a listening one; both work. Tests use MemEnvFactory;
// programs use package netty, e.g.
//
//	func(name string, conf *actor.Conf) (*actor.Env, error) {
//		return netty.NewEnv(name, conf, netty.WithClientMode())
//	}
type EnvFactory func(name string, conf *actor.Conf) (*actor.Env, error)

// MemEnvFactory returns an EnvFactory whose envs are clients of the
// in-memory network n (for tests and in-process clusters).
func MemEnvFactory(n *actor.MemNetwork, opts ...actor.Option) EnvFactory {
	return func(name string, conf *actor.Conf) (*actor.Env, error) {
		o := append([]actor.Option{actor.WithTransport(n.ClientTransport())}, opts...)
		return actor.NewEnv(name, conf, o...)
	}
}

// DriverOption configures NewDriver.
type DriverOption interface{ applyDriver(*driverOptions) }

// ExecutorOption configures RunExecutor.
type ExecutorOption interface{ applyExecutor(*executorOptions) }

// Option configures both NewDriver and RunExecutor.
type Option interface {
	DriverOption
	ExecutorOption
}

type driverOptions struct {
	logger      *zerolog.Logger
	excluded    []string
	allocator   ExecutorAllocator
	cm          ClusterManager
	listeners   []Listener
	rand        *rand.Rand
	lockRelease func() // WithLockRelease
}

type executorOptions struct {
	logger      *zerolog.Logger
	newEnv      EnvFactory
	conf        *actor.Conf
	lookupTries int
	stopTimeout time.Duration
}

type driverOptionFunc func(*driverOptions)

func (f driverOptionFunc) applyDriver(o *driverOptions) { f(o) }

type executorOptionFunc func(*executorOptions)

func (f executorOptionFunc) applyExecutor(o *executorOptions) { f(o) }

type bothOption struct {
	d driverOptionFunc
	e executorOptionFunc
}

func (b bothOption) applyDriver(o *driverOptions)     { b.d(o) }
func (b bothOption) applyExecutor(o *executorOptions) { b.e(o) }

// WithLogger sets the logger of the driver or executor (default: the env's
// logger for the driver; for an executor, zerolog.Nop(), which logs nothing).
func WithLogger(l zerolog.Logger) Option {
	return bothOption{
		d: func(o *driverOptions) { o.logger = &l },
		e: func(o *executorOptions) { o.logger = &l },
	}
}

// WithExcludedHosts makes the driver refuse executors on these hosts
// ("Executor is excluded due to failures: ID").
func WithExcludedHosts(hosts []string) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.excluded = append(o.excluded, hosts...) })
}

// WithListener adds a listener to the driver's listener bus from the start
// (so that it sees the first events too).
func WithListener(l Listener) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.listeners = append(o.listeners, l) })
}

// WithRand sets the driver's source of random choices: the order in which
// a scheduling step offers the executors' free cores to the pending tasks
// (a shuffle, as in Spark). The default is the process's random source. A
// simulator gives a seeded one, so that one seed makes the same choices
// every run. The driver uses it under its lock only.
func WithRand(r *rand.Rand) DriverOption {
	return driverOptionFunc(func(o *driverOptions) { o.rand = r })
}

// WithEnvFactory sets how an executor creates its envs. RunExecutor needs
// one.
func WithEnvFactory(f EnvFactory) ExecutorOption {
	return executorOptionFunc(func(o *executorOptions) { o.newEnv = f })
}

// WithExecutorConf sets the executor's own configuration, used by its config
// fetcher and merged with the driver's properties: the driver's values win,
// except for the startup keys (spark.rpc.*, spark.network.*, spark.auth*
// but the secret, spark.*.port), where the executor's own value is kept, as in
// Spark.
func WithExecutorConf(c *actor.Conf) ExecutorOption {
	return executorOptionFunc(func(o *executorOptions) { o.conf = c })
}

// WithStopTimeout bounds each step of an executor's stop (default 10s): the
// wait for its cancelled tasks to return, for the driver to acknowledge its
// removal, and for its envs to shut down.
func WithStopTimeout(d time.Duration) ExecutorOption {
	return executorOptionFunc(func(o *executorOptions) { o.stopTimeout = d })
}
