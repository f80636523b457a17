package cluster

// This file holds AppContext, what a running application sees of its
// driver, configuration and output.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// AppContext is what an application gets from the cluster: its
// configuration, a logger, the writer for its output, and, on demand, the
// driver's scheduler backend (Spark's SparkContext).
type AppContext struct {
	conf   *actor.Conf
	log    zerolog.Logger
	stdout io.Writer
	start  StartFunc

	id atomic.Pointer[string] // the application's id

	mu      sync.Mutex // held while the driver starts
	started bool
	run     Started
	err     error
}

// ExecutorControl is what a cluster manager lets an application do with
// its executors (Spark's ExecutorAllocationClient).
type ExecutorControl interface {
	// RequestTotalExecutors asks for a total of n executors.
	RequestTotalExecutors(ctx context.Context, n int) error
	// KillExecutors kills the given executors and does not replace them.
	KillExecutors(ctx context.Context, ids []string) error
}

// Started is what a StartFunc brought up.
type Started struct {
	// Driver is the application's scheduler backend.
	Driver *endpoints.Driver
	// AppID is the application's id when it was given only as the driver
	// started (client mode on a resource manager), else "".
	AppID string
	// Executors controls the application's executors; nil when its
	// cluster manager offers no control.
	Executors ExecutorControl
}

// StartFunc brings up an application's driver: what AppContext.Driver
// calls once.
type StartFunc func(ctx context.Context) (Started, error)

// NewAppContext returns an AppContext whose Driver method calls start once.
// The cluster managers build it; it is exported for running an AppFunc in
// tests with a driver of one's own.
func NewAppContext(appID string, conf *actor.Conf, log zerolog.Logger, stdout io.Writer, start StartFunc) *AppContext {
	if conf == nil {
		conf = actor.NewConf()
	}
	sc := &AppContext{conf: conf, log: log, stdout: stdout, start: start}
	sc.id.Store(&appID)
	return sc
}

// Driver brings up the application's scheduler backend on the first call
// (Spark's new SparkContext) and returns it; later calls return the same
// driver. It returns once the backend is ready: enough executors have
// registered (spark.scheduler.minRegisteredResourcesRatio) or the wait
// (spark.scheduler.maxRegisteredResourcesWaitingTime) has passed. The
// application must not Stop the driver; the cluster stops it when the
// application returns.
func (sc *AppContext) Driver(ctx context.Context) (*endpoints.Driver, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if !sc.started {
		sc.started = true
		sc.run, sc.err = sc.start(ctx)
		if id := sc.run.AppID; id != "" {
			sc.id.Store(&id)
		}
	}
	return sc.run.Driver, sc.err
}

// StartedDriver returns the driver if Driver has brought it up, else nil;
// it does not wait for a Driver call under way. The cluster managers stop
// it when the application returns.
func (sc *AppContext) StartedDriver() *endpoints.Driver {
	if !sc.mu.TryLock() {
		return nil
	}
	defer sc.mu.Unlock()
	return sc.run.Driver
}

// ErrNoClusterManager is returned by RequestTotalExecutors and
// KillExecutors when the application does not run on a resource manager
// (local master) or its driver is not up yet.
var ErrNoClusterManager = errors.New("cluster: no application master to ask (local master, or the driver is not up)")

// RequestTotalExecutors asks the application master for a total of n
// executors (Spark's requestTotalExecutors).
func (sc *AppContext) RequestTotalExecutors(ctx context.Context, n int) error {
	c := sc.executors()
	if c == nil {
		return ErrNoClusterManager
	}
	return c.RequestTotalExecutors(ctx, n)
}

// KillExecutors asks the application master to kill the given executors
// and not replace them (Spark's killExecutors). With
// spark.dynamicAllocation.enabled it returns endpoints.ErrDynamicAllocation,
// as Spark refuses it: the driver's ExecutorAllocationManager owns the
// number of executors, which the kill would lower behind its back.
func (sc *AppContext) KillExecutors(ctx context.Context, ids ...string) error {
	c := sc.executors()
	if c == nil {
		return ErrNoClusterManager
	}
	if on, _ := sc.conf.GetBool(endpoints.KeyDynamicAllocationEnabled, false); on {
		return endpoints.ErrDynamicAllocation
	}
	return c.KillExecutors(ctx, ids)
}

// executors returns the started driver's executor control, or nil.
func (sc *AppContext) executors() ExecutorControl {
	if !sc.mu.TryLock() {
		return nil // the driver is starting: not up yet
	}
	defer sc.mu.Unlock()
	return sc.run.Executors
}

// AppID returns the application id.
func (sc *AppContext) AppID() string { return *sc.id.Load() }

// Conf returns the application's configuration (spark.* keys).
func (sc *AppContext) Conf() *actor.Conf { return sc.conf }

// Logger returns the application's logger.
func (sc *AppContext) Logger() zerolog.Logger { return sc.log }

// Stdout returns the writer for the application's output: the submitting
// terminal in local and client mode, the driver container's stdout log in
// cluster mode.
func (sc *AppContext) Stdout() io.Writer { return sc.stdout }

// Printf writes to Stdout.
func (sc *AppContext) Printf(format string, args ...any) {
	fmt.Fprintf(sc.stdout, format, args...)
}
