package cluster

// This file holds the application master in cluster mode: the application
// runs in the AM as the driver, and the AM allocates its executors.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// runDriver is cluster mode: the application runs here as the driver.
func (am *appMaster) runDriver(ctx context.Context) error {
	fn, err := lookupApp(am.cfg.Class)
	if err != nil {
		return am.exit(ExitExceptionUserClass, "User class threw exception: "+err.Error())
	}
	env, err := am.cfg.Network.Listen("sparkDriver", am.conf, 0)
	if err != nil {
		return am.exit(ExitUncaughtException, "Cannot start the driver's env: "+err.Error())
	}
	defer shutdownEnv(env, am.log)
	am.conf.Set("spark.driver.host", env.Address().Host)
	am.conf.Set("spark.driver.port", fmt.Sprint(env.Address().Port))
	ep := newAMEndpoint(am.log, actor.RpcAddress{}, nil)
	amRef, err := env.RegisterEndpoint(AMEndpointName, ep)
	if err != nil {
		return am.exit(ExitUncaughtException, err.Error())
	}
	rm := env.RemoteRef(am.cfg.ResourceManager, ResourceManagerEndpointName)

	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	prog := &Progress{}
	ready := make(chan *endpoints.Driver, 1)
	uiReady := make(chan *driverUI, 1)
	registered := make(chan struct{})
	var registerErr atomic.Pointer[error]
	start := func(sctx context.Context) (*endpoints.Driver, error) {
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(am.cfg.Logger),
			endpoints.WithClusterManager(newLossLogger(appCtx, amRef, am.log)))
		if err != nil {
			return nil, err
		}
		uiReady <- startDriverUI(d, am.cfg.Network, am.cfg.AppID, nil, am.cfg.Logger)
		ready <- d
		select {
		case <-registered:
			if e := registerErr.Load(); e != nil {
				return nil, *e
			}
		case <-sctx.Done():
			return nil, context.Cause(sctx)
		}
		up := waitBackendReady(sctx, d, am.conf, am.numExecutors, 0.8, am.log)
		am.log.Info().Int("registered", up).Int("requested", am.numExecutors).
			Msgf("Executors registered: %d of %d", up, am.numExecutors)
		return d, nil
	}
	sc := NewAppContext(am.cfg.AppID, am.conf, am.cfg.Logger, am.cfg.Stdout, start)
	sc.am = amRef
	appDone := make(chan error, 1)
	go runUserApp(appCtx, fn, sc, am.cfg.Args, appDone)

	var driver *endpoints.Driver
	wait := time.NewTimer(am.waitTime)
	defer wait.Stop()
	select {
	case driver = <-ready:
	case err := <-appDone:
		if err != nil {
			return am.exit(ExitExceptionUserClass, "User class threw exception: "+err.Error())
		}
		return am.exit(ExitUncaughtException, "User did not initialize spark context!")
	case <-wait.C:
		//lint:ignore ST1005 Spark's ApplicationMaster text, also the final status diagnostics.
		cancelApp(errors.New("Timed out waiting for SparkContext."))
		return am.exit(ExitSCNotInited, "Timed out waiting for SparkContext.")
	case <-ctx.Done():
		return am.exit(ExitEarly, "Shutdown hook called before final status was reported.")
	}
	stopDriver := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := driver.Stop(sctx); err != nil {
			am.log.Warn().Err(err).Msg("stopping the driver")
		}
	}
	defer stopDriver() // a second Stop returns the first result
	ui := <-uiReady    // sent before the driver
	defer ui.stop()

	_, err = actor.ResultAs[*messages.AmRegisterResponse](rm.Ask(ctx, &messages.AmRegister{AppId: am.cfg.AppID,
		Host: env.Address().Host, DriverUrl: driver.URL(), Am: amRef.Proto(), TrackingUrl: ui.URL()}))
	if err != nil {
		registerErr.Store(&err)
		close(registered)
		cancelApp(err)
		return am.exit(ExitUncaughtException, "Cannot register with the resource manager: "+err.Error())
	}
	am.log.Info().Str("driver", driver.URL()).Msg("registered with the resource manager")
	alloc, err := newAllocator(env, rm, am.cfg.AppID, driver.URL(), am.numExecutors, am.executor, am.conf, am.cfg.Logger)
	if err != nil {
		registerErr.Store(&err)
		close(registered)
		return am.exit(ExitUncaughtException, err.Error())
	}
	alloc.progress = func() (int, int, int) {
		_, total, done, running, _ := prog.Snapshot()
		return total, done, running
	}
	alloc.onLost = func(id, reason string) { _ = driver.RemoveExecutor(id, reason) }
	ep.alloc.Store(alloc)
	allocCtx, stopAlloc := context.WithCancel(ctx)
	allocDone := make(chan bool, 1)
	go func() { allocDone <- alloc.run(allocCtx) }()
	close(registered)

	final, diag, code, unregister := FinalSucceeded, "", ExitSuccess, true
	select {
	case err := <-appDone:
		if err != nil {
			final, diag, code = FinalFailed, "User class threw exception: "+err.Error(), ExitExceptionUserClass
		}
	case err := <-alloc.failed:
		var ee *ExitError
		errors.As(err, &ee)
		final, diag, code = FinalFailed, ee.Reason, ee.Code
		cancelApp(err)
	case <-allocDone:
		cancelApp(errors.New("application killed"))
		final, diag, code, unregister = FinalKilled, "Application killed", ExitEarly, false
		allocDone <- true
	case <-ctx.Done():
		cancelApp(errors.New("application master stopped"))
		final, diag, code = FinalFailed, "Shutdown hook called before final status was reported.", ExitEarly
	}
	stopAlloc()
	<-allocDone
	// Stop the executors before unregistering, so that they end cleanly
	// rather than being killed with the application's containers.
	stopDriver()
	if unregister {
		am.unregister(rm, final, diag)
	}
	if code != ExitSuccess {
		return am.exit(code, diag)
	}
	am.log.Info().Msg("Final app status: SUCCEEDED, exitCode: 0")
	return nil
}

// runUserApp runs fn on the calling goroutine, labelled "Driver", and
// sends its result (a panic becomes an error) to done.
func runUserApp(ctx context.Context, fn AppFunc, sc *AppContext, args []string, done chan<- error) {
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

// waitBackendReady waits until ratio of the expected executors registered,
// or spark.scheduler.maxRegisteredResourcesWaitingTime (30s) passed. It
// returns how many executors are then registered and ready for tasks.
func waitBackendReady(ctx context.Context, d *endpoints.Driver, conf *actor.Conf, expected int, defRatio float64, log zerolog.Logger) int {
	ready := func() int {
		n := 0
		for _, ex := range d.Executors() {
			if ex.Ready {
				n++
			}
		}
		return n
	}
	ratio := defRatio
	if v, ok := conf.Lookup(KeyMinRegisteredRatio); ok {
		if _, err := fmt.Sscanf(v, "%g", &ratio); err != nil {
			log.Warn().Str("value", v).Msg("invalid " + KeyMinRegisteredRatio)
		}
	}
	wait, err := conf.GetDuration(KeyMaxRegisteredWait, "30s", time.Millisecond)
	if err != nil {
		wait = 30 * time.Second
	}
	n := int(float64(expected)*min(1, ratio) + 0.999999)
	if n <= 0 {
		return ready()
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := d.WaitForExecutors(wctx, n); err != nil {
		log.Info().Err(err).Msg("SchedulerBackend is ready for scheduling after waiting maxRegisteredResourcesWaitingTime")
	}
	return ready()
}
