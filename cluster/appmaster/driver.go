package appmaster

// This file holds the application master in cluster mode: the application
// runs in the AM as the driver, and the AM allocates its executors.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/driverrun"

	"github.com/sparkrpc/sparkrpc/cluster"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// runDriver is cluster mode: the application runs here as the driver.
func (am *appMaster) runDriver(ctx context.Context) error {
	fn, err := cluster.FindApp(am.cfg.Class)
	if err != nil {
		return am.exit(cluster.ExitExceptionUserClass, "User class threw exception: "+err.Error())
	}
	env, err := am.cfg.Network.Listen("sparkDriver", am.conf, 0)
	if err != nil {
		return am.exit(cluster.ExitUncaughtException, "Cannot start the driver's env: "+err.Error())
	}
	defer cluster.ShutdownEnv(env, am.log)
	am.conf.Set("spark.driver.host", env.Address().Host)
	am.conf.Set("spark.driver.port", fmt.Sprint(env.Address().Port))
	ep := newAMEndpoint(am.log, actor.RpcAddress{}, nil)
	amRef, err := env.RegisterEndpoint(cluster.AMEndpointName, ep)
	if err != nil {
		return am.exit(cluster.ExitUncaughtException, err.Error())
	}
	rm := env.RemoteRef(am.cfg.ResourceManager, cluster.ResourceManagerEndpointName)

	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	prog := &driverrun.Progress{}
	ready := make(chan *endpoints.Driver, 1)
	uiReady := make(chan *driverrun.UI, 1)
	registered := make(chan struct{})
	var registerErr atomic.Pointer[error]
	backend := NewSchedulerBackend(appCtx, amRef, am.log)
	start := func(sctx context.Context) (cluster.Started, error) {
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(am.cfg.Logger),
			endpoints.WithClusterManager(backend))
		if err != nil {
			return cluster.Started{}, err
		}
		uiReady <- driverrun.StartUI(d, am.cfg.Network, am.cfg.AppID, nil, am.cfg.Logger)
		ready <- d
		select {
		case <-registered:
			if e := registerErr.Load(); e != nil {
				return cluster.Started{}, *e
			}
		case <-sctx.Done():
			return cluster.Started{}, context.Cause(sctx)
		}
		up := driverrun.WaitBackendReady(sctx, d, am.conf, am.numExecutors, am.log)
		am.log.Info().Int("registered", up).Int("requested", am.numExecutors).
			Msgf("Executors registered: %d of %d", up, am.numExecutors)
		return cluster.Started{Driver: d, Executors: backend}, nil
	}
	sc := cluster.NewAppContext(am.cfg.AppID, am.conf, am.cfg.Logger, am.cfg.Stdout, start)
	appDone := make(chan error, 1)
	go driverrun.RunUserApp(appCtx, fn, sc, am.cfg.Args, appDone)

	var driver *endpoints.Driver
	wait := time.NewTimer(am.waitTime)
	defer wait.Stop()
	select {
	case driver = <-ready:
	case err := <-appDone:
		if err != nil {
			return am.exit(cluster.ExitExceptionUserClass, "User class threw exception: "+err.Error())
		}
		return am.exit(cluster.ExitUncaughtException, "User did not initialize spark context!")
	case <-wait.C:
		//lint:ignore ST1005 Spark's ApplicationMaster text, also the final status diagnostics.
		cancelApp(errors.New("Timed out waiting for SparkContext."))
		return am.exit(cluster.ExitSCNotInited, "Timed out waiting for SparkContext.")
	case <-ctx.Done():
		return am.exit(cluster.ExitEarly, "Shutdown hook called before final status was reported.")
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
	defer ui.Stop()

	_, err = actor.ResultAs[*messages.AmRegisterResponse](rm.Ask(ctx, &messages.AmRegister{AppId: am.cfg.AppID,
		Host: env.Address().Host, DriverUrl: driver.URL(), Am: amRef.Proto(), TrackingUrl: ui.URL()}))
	if err != nil {
		registerErr.Store(&err)
		close(registered)
		cancelApp(err)
		return am.exit(cluster.ExitUncaughtException, "Cannot register with the resource manager: "+err.Error())
	}
	am.log.Info().Str("driver", driver.URL()).Msg("registered with the resource manager")
	alloc, err := newAllocator(env, rm, am.cfg.AppID, driver.URL(), am.numExecutors, am.executor, am.conf, am.cfg.Logger)
	if err != nil {
		registerErr.Store(&err)
		close(registered)
		return am.exit(cluster.ExitUncaughtException, err.Error())
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

	final, diag, code, unregister := cluster.FinalSucceeded, "", cluster.ExitSuccess, true
	select {
	case err := <-appDone:
		if err != nil {
			final, diag, code = cluster.FinalFailed, "User class threw exception: "+err.Error(), cluster.ExitExceptionUserClass
		}
	case err := <-alloc.failed:
		var ee *cluster.AMExitError
		errors.As(err, &ee)
		final, diag, code = cluster.FinalFailed, ee.Reason, ee.Code
		cancelApp(err)
	case <-allocDone:
		cancelApp(errors.New("application killed"))
		final, diag, code, unregister = cluster.FinalKilled, "Application killed", cluster.ExitEarly, false
		allocDone <- true
	case <-ctx.Done():
		cancelApp(errors.New("application master stopped"))
		final, diag, code = cluster.FinalFailed, "Shutdown hook called before final status was reported.", cluster.ExitEarly
	}
	stopAlloc()
	<-allocDone
	// Stop the executors before unregistering, so that they end cleanly
	// rather than being killed with the application's containers.
	stopDriver()
	if unregister {
		am.unregister(rm, final, diag)
	}
	if code != cluster.ExitSuccess {
		return am.exit(code, diag)
	}
	am.log.Info().Msg("Final app status: SUCCEEDED, exitCode: 0")
	return nil
}
