package appmaster

// This file holds the application master in cluster mode: the application
// runs in the AM as the driver (driverrun.Run), and the AM's backend
// registers with the resource manager and allocates the executors.

import (
	"context"
	"errors"
	"sync"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/driverrun"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// runDriver is cluster mode: the application runs here as the driver.
func (am *appMaster) runDriver(ctx context.Context) error {
	fn, err := cluster.FindApp(am.cfg.Class)
	if err != nil {
		return am.exit(cluster.ExitExceptionUserClass, "User class threw exception: "+err.Error())
	}
	b := &driverBackend{am: am, ctx: ctx, tasks: &driverrun.Progress{}}
	return driverrun.Run(ctx, driverrun.Spec{AppID: am.cfg.AppID, Conf: am.conf, Network: am.cfg.Network,
		Logger: am.cfg.Logger, Stdout: am.cfg.Stdout, Tasks: b.tasks, Fn: fn, Args: am.cfg.Args,
		WaitTime: am.waitTime, DriverLogURLs: am.cfg.LogURLs, Backend: b})
}

// amEnd is how the application master ends: its final status and
// diagnostics, its exit code, and whether it unregisters.
type amEnd struct {
	final      cluster.FinalStatus
	diag       string
	code       int
	unregister bool
}

// driverBackend is the driver's backend in the application master: the
// AM's endpoint beside the driver, its registration with the resource
// manager once the driver is up, and the allocator.
type driverBackend struct {
	am    *appMaster
	ctx   context.Context // the AM's: its end is a shutdown
	tasks *driverrun.Progress

	appCtx context.Context
	app    *driverrun.App
	env    *actor.Env
	ep     *amEndpoint
	amRef  *actor.Ref
	rm     *actor.Ref
	sched  *SchedulerBackend

	launched  bool
	failed    *amEnd // the AM could not register or allocate: it exits at once
	stopAlloc context.CancelFunc
	allocDone chan bool
	watched   chan struct{} // closed when watch has returned

	mu  sync.Mutex
	end *amEnd // set by watch when the allocator failed or was killed
}

// Prepare registers the AM's endpoint beside the driver.
func (b *driverBackend) Prepare(ctx context.Context, env *actor.Env, app *driverrun.App) (endpoints.ClusterManager, error) {
	b.appCtx, b.app, b.env = ctx, app, env
	b.ep = newAMEndpoint(context.Background(), b.am.log, nil, nil)
	var err error
	if b.amRef, err = env.RegisterEndpoint(cluster.AMEndpointName, b.ep); err != nil {
		return nil, err
	}
	b.rm = env.RemoteRef(b.am.cfg.ResourceManager, cluster.ResourceManagerEndpointName)
	b.sched = NewSchedulerBackend(ctx, b.amRef, b.am.log)
	return b.sched, nil
}

// Launch registers with the resource manager, with the driver's and its
// UI's addresses, and starts the allocator.
func (b *driverBackend) Launch(_ context.Context, d *endpoints.Driver, uiURL string) (driverrun.Launch, error) {
	am := b.am
	b.launched = true
	_, err := actor.ResultAs[*messages.AmRegisterResponse](b.rm.Ask(b.ctx, &messages.AmRegister{AppId: am.cfg.AppID,
		Host: b.env.Address().Host, DriverUrl: d.URL(), Am: b.amRef.Proto(), TrackingUrl: uiURL,
		HistoryUrl: cluster.HistoryURL(am.conf, am.cfg.AppID)}))
	if err != nil {
		b.failed = &amEnd{code: cluster.ExitUncaughtException, diag: "Cannot register with the resource manager: " + err.Error()}
		b.app.End(err)
		return driverrun.Launch{}, err
	}
	am.log.Info().Str("driver", d.URL()).Msg("registered with the resource manager")
	alloc, err := newAllocator(b.env, b.rm, am.cfg.AppID, d.URL(), am.numExecutors, am.executor, am.conf, am.cfg.Logger)
	if err != nil {
		b.failed = &amEnd{code: cluster.ExitUncaughtException, diag: err.Error()}
		return driverrun.Launch{}, err
	}
	alloc.progress = func() (int, int, int) {
		_, total, done, running, _ := b.tasks.Snapshot()
		return total, done, running
	}
	alloc.onLost = func(id, reason string) { _ = d.RemoveExecutor(id, reason) }
	b.ep.alloc.Store(alloc)
	var allocCtx context.Context
	allocCtx, b.stopAlloc = context.WithCancel(b.ctx)
	b.allocDone = make(chan bool, 1)
	go func() { b.allocDone <- alloc.run(allocCtx) }()
	b.watched = make(chan struct{})
	go b.watch(alloc)
	return driverrun.Launch{Expected: am.numExecutors, Executors: b.sched}, nil
}

// watch ends the application when the allocator fails (too many executor
// failures) or ends (the application was killed), until the application
// has ended.
func (b *driverBackend) watch(alloc *allocator) {
	defer close(b.watched)
	var end *amEnd
	select {
	case err := <-alloc.failed:
		var ee *cluster.AMExitError
		errors.As(err, &ee)
		end = &amEnd{final: cluster.FinalFailed, diag: ee.Reason, code: ee.Code, unregister: true}
		b.app.End(err)
	case v := <-b.allocDone:
		b.allocDone <- v
		end = &amEnd{final: cluster.FinalKilled, diag: "Application killed", code: cluster.ExitEarly}
		b.app.End(errors.New("application killed"))
	case <-b.appCtx.Done():
		return
	}
	b.mu.Lock()
	b.end = end
	b.mu.Unlock()
}

// Finish stops the allocator (the driver has stopped its executors),
// unregisters with the application's final status, and returns the AM's
// exit error (nil on success).
func (b *driverBackend) Finish(appErr error) error {
	am := b.am
	if b.watched != nil {
		<-b.watched
		b.stopAlloc()
		<-b.allocDone
	}
	end := b.ending(appErr)
	if end.unregister {
		am.unregister(b.rm, end.final, end.diag)
	}
	if end.code != cluster.ExitSuccess {
		return am.exit(end.code, end.diag)
	}
	am.log.Info().Msg("Final app status: SUCCEEDED, exitCode: 0")
	return nil
}

// ending is how the AM ends after the application returned appErr.
func (b *driverBackend) ending(appErr error) amEnd {
	b.mu.Lock()
	end := b.end
	b.mu.Unlock()
	var ee *cluster.AMExitError
	switch {
	case b.failed != nil:
		return *b.failed
	case b.amRef == nil: // the driver's env or the AM's endpoint did not start
		return amEnd{code: cluster.ExitUncaughtException, diag: "Cannot start the driver's env: " + errString(appErr)}
	case !b.launched && errors.As(appErr, &ee) && ee.Code == cluster.ExitSCNotInited:
		return amEnd{code: cluster.ExitSCNotInited, diag: "Timed out waiting for SparkContext."}
	case !b.launched && b.ctx.Err() != nil, b.launched && end == nil && b.ctx.Err() != nil:
		return amEnd{final: cluster.FinalFailed, code: cluster.ExitEarly, unregister: b.launched,
			diag: "Shutdown hook called before final status was reported."}
	case !b.launched && appErr != nil:
		return amEnd{code: cluster.ExitExceptionUserClass, diag: "User class threw exception: " + appErr.Error()}
	case !b.launched:
		return amEnd{code: cluster.ExitUncaughtException, diag: "User did not initialize spark context!"}
	case end != nil:
		return *end
	case appErr != nil:
		return amEnd{final: cluster.FinalFailed, code: cluster.ExitExceptionUserClass, unregister: true,
			diag: "User class threw exception: " + appErr.Error()}
	}
	return amEnd{final: cluster.FinalSucceeded, code: cluster.ExitSuccess, unregister: true}
}

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
