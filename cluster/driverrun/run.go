// This file holds running the application on the driver's goroutine and
// the readiness rule every cluster manager applies.

package driverrun

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// noticeStart returns start wrapped so that the returned channel closes
// when the application first asks for its driver.
func noticeStart(start cluster.StartFunc) (<-chan struct{}, cluster.StartFunc) {
	started := make(chan struct{})
	var once sync.Once
	return started, func(ctx context.Context) (cluster.Started, error) {
		once.Do(func() { close(started) })
		return start(ctx)
	}
}

// runApp runs the application in the driver's goroutine and returns its
// error. An application that has not asked for its driver (SparkContext)
// within wait (spark.yarn.am.waitTime; 0: no bound) is cancelled and fails as YARN's
// application master fails it: an *ExitError with code ExitSCNotInited.
func runApp(ctx context.Context, fn cluster.AppFunc, sc *cluster.AppContext, args []string, started <-chan struct{}, wait time.Duration) error {
	appCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go runUserApp(appCtx, fn, sc, args, done)
	if wait <= 0 {
		return awaitApp(ctx, done)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-started:
		return awaitApp(ctx, done)
	case <-ctx.Done():
		return awaitApp(ctx, done)
	case <-timer.C:
	}
	reason := fmt.Sprintf("SparkContext did not initialize after waiting for %d ms (%s). Please check earlier log output for errors. Failing the application.",
		wait.Milliseconds(), cluster.KeyAMWaitTime)
	cancel(errors.New(reason))
	select {
	case <-done:
	case <-time.After(appStopGrace): // an application that ignores its ctx is left behind
	}
	return &cluster.AMExitError{Code: cluster.ExitSCNotInited, Reason: reason}
}

// appStopGrace is how long an application told to end (its ctx ended: it
// was killed, or the command interrupted) has to return. One that ignores
// its ctx is left behind then, so that the driver's teardown and the
// command's exit do not wait for it for ever.
const appStopGrace = 10 * time.Second

// awaitApp returns the application's result from done; once ctx has
// ended, it waits at most appStopGrace for it.
func awaitApp(ctx context.Context, done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(appStopGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("%w (the application did not return within %s of being told to end: it is left running)", context.Cause(ctx), appStopGrace)
	}
}

// runUserApp runs fn on the calling goroutine, labelled "Driver", and
// sends its result (a panic becomes an error) to done.
func runUserApp(ctx context.Context, fn cluster.AppFunc, sc *cluster.AppContext, args []string, done chan<- error) {
	var err error
	pprof.Do(ctx, pprof.Labels("thread", DriverGoroutineLabel), func(ctx context.Context) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		err = fn(ctx, sc, args)
	})
	done <- err
}

// waitBackendReady is the readiness rule of every cluster manager (Spark's
// SchedulerBackend.isReady): it waits until
// spark.scheduler.minRegisteredResourcesRatio (default 0.8) of the expected
// executors have registered, or spark.scheduler.maxRegisteredResourcesWaitingTime
// (default 30s) has passed, or ctx ends. It returns how many executors are
// then registered and ready for tasks. dc holds the keys, read and checked
// by cluster.ParseDriverConf.
func waitBackendReady(ctx context.Context, d *endpoints.Driver, dc cluster.DriverConf, expected int, log zerolog.Logger) int {
	ready := func() int {
		n := 0
		for _, ex := range d.Executors() {
			if ex.Ready {
				n++
			}
		}
		return n
	}
	n := int(float64(expected)*min(1, dc.RegisteredRatio) + 0.999999)
	if n <= 0 {
		return ready()
	}
	wctx, cancel := context.WithTimeout(ctx, dc.MaxRegisteredWait)
	defer cancel()
	if err := d.WaitForExecutors(wctx, n); err != nil {
		log.Info().Err(err).Msg("SchedulerBackend is ready for scheduling after waiting maxRegisteredResourcesWaitingTime")
	}
	return ready()
}

// DriverGoroutineLabel is the pprof label value ("thread"=DriverGoroutineLabel)
// of the goroutine that runs the application as the driver.
const DriverGoroutineLabel = "Driver"
