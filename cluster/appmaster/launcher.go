package appmaster

// This file holds the application master in client mode (Spark's
// ExecutorLauncher): the driver runs in the submitting process, and the AM
// only allocates its executors until the driver finishes or goes away.

import (
	"context"
	"errors"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

// runExecutorLauncher is client mode: the driver runs in the submitting
// process; the AM allocates executors for it until it finishes.
func (am *appMaster) runExecutorLauncher(ctx context.Context) error {
	env, err := am.cfg.Network.Listen("sparkYarnAM", am.conf, 0)
	if err != nil {
		return am.exit(cluster.ExitUncaughtException, "Cannot start the AM's env: "+err.Error())
	}
	defer cluster.ShutdownEnv(env, am.log)
	var driverRef *actor.Ref
	deadline := time.Now().Add(am.waitTime)
	for {
		driverRef, err = env.SetupEndpointRefByURI(ctx, am.cfg.DriverURL)
		if err == nil {
			break
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return am.exit(cluster.ExitUncaughtException, "Failed to connect to driver at "+am.cfg.DriverURL+": "+err.Error())
		}
		am.log.Warn().Err(err).Msg("Failed to connect to driver, retrying")
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	ep := newAMEndpoint(ctx, am.log, driverRef, make(chan *messages.AmDriverFinished, 1))
	amRef, err := env.RegisterEndpoint(cluster.AMEndpointName, ep)
	if err != nil {
		return am.exit(cluster.ExitUncaughtException, err.Error())
	}
	rm := env.RemoteRef(am.cfg.ResourceManager, cluster.ResourceManagerEndpointName)
	_, err = actor.ResultAs[*messages.AmRegisterResponse](rm.Ask(ctx, &messages.AmRegister{AppId: am.cfg.AppID,
		Host: env.Address().Host, DriverUrl: am.cfg.DriverURL, Am: amRef.Proto(),
		TrackingUrl: am.conf.Get(webui.KeyDriverUIAddress, ""), HistoryUrl: cluster.HistoryURL(am.conf, am.cfg.AppID)}))
	if err != nil {
		return am.exit(cluster.ExitUncaughtException, "Cannot register with the resource manager: "+err.Error())
	}
	alloc, err := newAllocator(env, rm, am.cfg.AppID, am.cfg.DriverURL, am.numExecutors, am.executor, am.conf, am.cfg.Logger)
	if err != nil {
		return am.exit(cluster.ExitUncaughtException, err.Error())
	}
	ep.alloc.Store(alloc)
	allocCtx, stopAlloc := context.WithCancel(ctx)
	allocDone := make(chan bool, 1)
	go func() { allocDone <- alloc.run(allocCtx) }()

	final, diag, code, unregister := cluster.FinalSucceeded, "", cluster.ExitSuccess, true
	select {
	case f := <-ep.finished:
		final, diag = cluster.FinalStatus(f.GetFinalStatus()), f.GetDiagnostics()
	case why := <-ep.lost:
		final, diag, code = cluster.FinalFailed, why, cluster.ExitDisconnected
		select {
		case f := <-ep.finished: // its word came after all
			final, diag, code = cluster.FinalStatus(f.GetFinalStatus()), f.GetDiagnostics(), cluster.ExitSuccess
		default:
		}
	case err := <-alloc.failed:
		var ee *cluster.AMExitError
		errors.As(err, &ee)
		final, diag, code = cluster.FinalFailed, ee.Reason, ee.Code
	case <-allocDone:
		final, diag, code, unregister = cluster.FinalKilled, "Application killed", cluster.ExitEarly, false
		allocDone <- true
	case <-ctx.Done():
		final, diag, code = cluster.FinalFailed, "Shutdown hook called before final status was reported.", cluster.ExitEarly
	}
	stopAlloc()
	<-allocDone
	if unregister {
		am.unregister(rm, final, diag)
	}
	if code != cluster.ExitSuccess {
		return am.exit(code, diag)
	}
	return nil
}
