package cluster

// This file holds AppContext, what a running application sees of its
// driver, configuration and output.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// AppContext is what an application gets from the cluster: its
// configuration, a logger, the writer for its output, and, on demand, the
// driver's scheduler backend (Spark's SparkContext).
type AppContext struct {
	appID  string
	conf   *actor.Conf
	log    zerolog.Logger
	stdout io.Writer

	start  func(ctx context.Context) (*endpoints.Driver, error)
	am     *actor.Ref
	once   sync.Once
	driver *endpoints.Driver
	err    error
}

// NewAppContext returns an AppContext whose Driver method calls start once.
// The cluster's runners build it; it is exported for running an AppFunc in
// tests with a driver of one's own.
func NewAppContext(appID string, conf *actor.Conf, log zerolog.Logger, stdout io.Writer,
	start func(ctx context.Context) (*endpoints.Driver, error)) *AppContext {
	if conf == nil {
		conf = actor.NewConf()
	}
	return &AppContext{appID: appID, conf: conf, log: log, stdout: stdout, start: start}
}

// Driver brings up the application's scheduler backend on the first call
// (Spark's new SparkContext) and returns it; later calls return the same
// driver. It returns once the backend is ready: enough executors have
// registered (spark.scheduler.minRegisteredResourcesRatio) or the wait
// (spark.scheduler.maxRegisteredResourcesWaitingTime) has passed. The
// application must not Stop the driver; the cluster stops it when the
// application returns.
func (sc *AppContext) Driver(ctx context.Context) (*endpoints.Driver, error) {
	sc.once.Do(func() {
		sc.driver, sc.err = sc.start(ctx)
	})
	return sc.driver, sc.err
}

// ErrNoClusterManager is returned by RequestTotalExecutors and
// KillExecutors when the application does not run on a resource manager
// (local master) or its driver is not up yet.
var ErrNoClusterManager = errors.New("cluster: no application master to ask (local master, or the driver is not up)")

// RequestTotalExecutors asks the application master for a total of n
// executors (Spark's requestTotalExecutors).
func (sc *AppContext) RequestTotalExecutors(ctx context.Context, n int) error {
	if sc.am == nil {
		return ErrNoClusterManager
	}
	_, err := actor.AskAs[*messages.AmBoolResponse](ctx, sc.am, &messages.AmRequestExecutors{Total: int32(n)})
	return err
}

// KillExecutors asks the application master to kill the given executors
// and not replace them (Spark's killExecutors).
func (sc *AppContext) KillExecutors(ctx context.Context, ids ...string) error {
	if sc.am == nil {
		return ErrNoClusterManager
	}
	_, err := actor.AskAs[*messages.AmBoolResponse](ctx, sc.am, &messages.AmKillExecutors{ExecutorIds: ids})
	return err
}

// AppID returns the application id.
func (sc *AppContext) AppID() string { return sc.appID }

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
