package yarn

// This file holds client deploy mode on a resource manager: the driver runs
// in the submitting process and an application master (ExecutorLauncher)
// allocates its executors.

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/cluster/driverrun"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// runClientMode runs the driver in this process (driverrun.Run); bringing
// it up submits an AM (ExecutorLauncher) that allocates executors for it.
func runClientMode(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc, client *rmclient.Client, sub rmclient.Submission, net cluster.Network, printer *reportPrinter, appKeys *cluster.AppKeys) error {
	conf := cfg.Conf
	amMem, err := memoryMB(conf, cluster.KeyAMMemory, "512m")
	if err != nil {
		return err
	}
	amCores, err := conf.GetInt(cluster.KeyAMCores, 1)
	if err != nil {
		return err
	}
	numExec, err := conf.GetInt(cluster.KeyNumExecutors, 2)
	if err != nil {
		return err
	}
	waitTime, err := conf.GetDuration(cluster.KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	sub.AMResource = cluster.Resource{MemoryMB: amMem, Cores: amCores}
	sub.UnmanagedDriver = true
	b := &clientBackend{ctx: ctx, cfg: cfg, client: client, sub: sub, printer: printer, appKeys: appKeys,
		numExec: numExec, tasks: &driverrun.Progress{}, log: cfg.Logger}
	return driverrun.Run(ctx, driverrun.Spec{Conf: conf, Network: net, Logger: cfg.Logger, Stdout: cfg.Stdout,
		Status: cfg.Stderr, Progress: cfg.Stderr, Tasks: b.tasks, Fn: fn, Args: cfg.Args, WaitTime: waitTime, Backend: b})
}

// clientBackend is the driver's backend in client mode: it submits the
// application with an ExecutorLauncher AM once the driver is up, reports
// the driver's task progress to the resource manager, ends the
// application if the resource manager ends it, and tells the AM (or,
// failing that, the resource manager) how the application ended.
type clientBackend struct {
	ctx     context.Context // the submitting command's
	cfg     cluster.SubmitConfig
	client  *rmclient.Client
	sub     rmclient.Submission
	printer *reportPrinter
	appKeys *cluster.AppKeys
	numExec int
	tasks   *driverrun.Progress
	log     zerolog.Logger

	appCtx   context.Context
	app      *driverrun.App
	env      *actor.Env
	sched    *appmaster.SchedulerBackend
	handle   *rmclient.AppHandle
	amRef    *actor.Ref
	progStop chan struct{}
	progDone chan struct{}
	monitor  chan struct{}
	monDone  chan struct{}
}

// Prepare gives the driver its link to the AM, whose address comes later.
func (b *clientBackend) Prepare(ctx context.Context, env *actor.Env, app *driverrun.App) (endpoints.ClusterManager, error) {
	b.appCtx, b.app, b.env = ctx, app, env
	b.sched = appmaster.NewSchedulerBackend(ctx, nil, b.log)
	return b.sched, nil
}

// Launch submits the application, with the driver's address for its AM,
// and waits until the AM has registered.
func (b *clientBackend) Launch(sctx context.Context, d *endpoints.Driver, _ string) (driverrun.Launch, error) {
	conf := b.cfg.Conf
	// The UI's address goes to the AM in the conf, and from it to the
	// resource manager as the tracking URL.
	b.sub.AMCommand = []string{"sparkrpc", "applicationmaster", "--client-mode", "--driver-url", d.URL(), "--rm", b.client.Address().HostPort()}
	b.sub.Conf = conf.All()
	h, err := b.client.Submit(sctx, b.sub)
	if err != nil {
		return driverrun.Launch{}, err
	}
	b.handle = h
	if len(b.sub.AppSecret) > 0 {
		b.appKeys.Set(h.AppID(), b.sub.AppSecret)
	}
	b.progStop, b.progDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.progDone)
		reportDriverProgress(b.client, h.AppID(), b.tasks, b.sub.ReportInterval, b.progStop)
	}()
	conf.Set(cluster.KeyAppID, h.AppID())
	fmt.Fprintf(b.cfg.Stderr, "Submitted application %s\n", h.AppID())
	h.AddListener(b.printer)
	r, err := h.WaitFor(sctx, func(r *rmclient.AppReport) bool { return r.State == cluster.StateRunning })
	if err != nil {
		return driverrun.Launch{}, err
	}
	if r.State != cluster.StateRunning {
		return driverrun.Launch{}, fmt.Errorf("%w: Yarn application has already ended! It might have been killed or unable to launch application master. State %s, diagnostics: %s",
			cluster.ErrAppFailed, r.State, r.Diagnostics)
	}
	if r.AM != nil {
		// From the driver's env, which authenticates with the
		// application's secret as the AM does.
		if ref, err := b.env.RefFromProto(r.AM); err == nil {
			b.amRef = ref
			b.sched.SetAM(ref)
		}
	}
	b.monitor, b.monDone = make(chan struct{}), make(chan struct{})
	go b.watch(h)
	return driverrun.Launch{Expected: b.numExec, AppID: h.AppID(), Executors: b.sched}, nil
}

// watch ends the application if it ends while the driver runs (killed, too
// many executor failures).
func (b *clientBackend) watch(h *rmclient.AppHandle) {
	defer close(b.monDone)
	r, err := h.WaitFor(b.appCtx, func(*rmclient.AppReport) bool {
		select {
		case <-b.monitor:
			return true
		default:
			return false
		}
	})
	switch {
	case err == nil && r.State.Terminal():
		b.app.End(r.ExitedError())
	case err != nil && cluster.RemoteIs(err, cluster.ErrUnknownAppID):
		// A resource manager that restarted knows it no more, and its node
		// managers stop its AM and executors (Spark's monitorApplication
		// takes "Application not found" for KILLED).
		b.app.End(fmt.Errorf("%w: YARN application %s is no longer known to the resource manager (was it restarted?): %v",
			cluster.ErrAppFailed, h.AppID(), err))
	case err != nil && b.appCtx.Err() == nil && !b.finishing():
		// The resource manager is gone (WaitFor gave up after its failed
		// polls): the AM gives up on it as well, so no executor can be had
		// any more. Spark's monitorApplication ends the application:
		// "Failed to contact YARN for application".
		b.app.End(fmt.Errorf("%w: failed to contact the resource manager for application %s: %v",
			cluster.ErrAppFailed, h.AppID(), err))
	}
}

// finishing reports whether Finish has stopped the watch.
func (b *clientBackend) finishing() bool {
	select {
	case <-b.monitor:
		return true
	default:
		return false
	}
}

// Finish stops the progress reports and the watch, tells the AM how the
// application ended (or kills it when the AM cannot be told) and waits
// until the resource manager has ended it.
func (b *clientBackend) Finish(appErr error) error {
	if b.progStop != nil {
		close(b.progStop)
		<-b.progDone
	}
	if b.monitor != nil {
		close(b.monitor)
		<-b.monDone
	}
	h := b.handle
	if h == nil {
		return appErr
	}
	final, diag := cluster.FinalSucceeded, ""
	if appErr != nil {
		final, diag = cluster.FinalFailed, "User application failed: "+appErr.Error()
	}
	told, killedHere := false, false
	if b.amRef != nil && b.ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := b.amRef.AskSync(fctx, &messages.AmDriverFinished{FinalStatus: messages.RmFinalStatus(final), Diagnostics: diag})
		cancel()
		told = err == nil
	}
	if !told {
		// Interrupted, or the AM is unreachable: end the application here.
		why := "Application killed: the driver ended before its application master could be told."
		if b.ctx.Err() != nil {
			why = "Application killed: the submitting command was interrupted."
		}
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		killed, kerr := b.client.Kill(kctx, h.AppID(), why)
		cancel()
		killedHere = kerr == nil && killed
		if kerr == nil && b.ctx.Err() != nil && appErr != nil {
			appErr = fmt.Errorf("%w: killed application %s", appErr, h.AppID())
		}
	}
	wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	r, err := h.WaitFor(wctx, func(r *rmclient.AppReport) bool { return r.State.Terminal() })
	cancel()
	if appErr == nil && err == nil && !killedHere && r.Err() != nil {
		// Killed (`submit --kill`) or failed by the resource manager after
		// the watch's last report and before the application returned
		// (WaitFor's report, without an error, is terminal): the
		// application did not succeed, as its report says.
		return r.ExitedError()
	}
	return appErr
}
