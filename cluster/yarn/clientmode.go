package yarn

// This file holds client deploy mode on a resource manager: the driver runs
// in the submitting process and an application master (ExecutorLauncher)
// allocates its executors.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"

	"github.com/sparkrpc/sparkrpc/cluster/driverrun"

	"github.com/sparkrpc/sparkrpc/cluster"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// runClientMode runs the driver in this process; bringing it up submits an
// AM (ExecutorLauncher) that allocates executors for it.
func runClientMode(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc, client *rmclient.Client, sub rmclient.Submission, net cluster.Network, printer *reportPrinter, appKeys *cluster.AppKeys) error {
	conf := cfg.Conf
	log := cfg.Logger
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
	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	prog := &driverrun.Progress{}
	losses := appmaster.NewSchedulerBackend(appCtx, nil, log)
	var sc *cluster.AppContext
	var (
		env      *actor.Env
		handle   *rmclient.AppHandle
		amRef    *actor.Ref
		monitor  = make(chan struct{})
		monDone  = make(chan struct{})
		monStart sync.Once
		// The driver runs here, not in the AM: it reports its tasks to
		// the resource manager itself, for the application's report.
		progStop  = make(chan struct{})
		progDone  = make(chan struct{})
		progStart sync.Once
	)
	var ui *driverrun.UI
	defer func() { ui.Stop() }()
	start := func(sctx context.Context) (cluster.Started, error) {
		var err error
		env, err = net.Listen("sparkDriver", conf, 0)
		if err != nil {
			return cluster.Started{}, err
		}
		conf.Set("spark.driver.host", env.Address().Host)
		conf.Set("spark.driver.port", strconv.Itoa(env.Address().Port))
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(log), endpoints.WithClusterManager(losses))
		if err != nil {
			return cluster.Started{}, err
		}
		// The UI's address goes to the AM in the conf below, and from it
		// to the resource manager as the tracking URL.
		ui = driverrun.StartUI(d, net, "", nil, log)
		sub.AMResource = cluster.Resource{MemoryMB: amMem, Cores: amCores}
		sub.AMCommand = []string{"sparkrpc", "applicationmaster", "--client-mode", "--driver-url", d.URL(), "--rm", client.Address().HostPort()}
		sub.UnmanagedDriver = true
		sub.Conf = conf.All()
		h, err := client.Submit(sctx, sub)
		if err != nil {
			return cluster.Started{}, err
		}
		handle = h
		if len(sub.AppSecret) > 0 {
			appKeys.Set(h.AppID(), sub.AppSecret)
		}
		progStart.Do(func() {
			go func() {
				defer close(progDone)
				reportDriverProgress(client, h.AppID(), prog, sub.ReportInterval, progStop)
			}()
		})
		conf.Set(cluster.KeyAppID, h.AppID())
		fmt.Fprintf(cfg.Stderr, "Submitted application %s\n", h.AppID())
		h.AddListener(printer)
		r, err := h.WaitFor(sctx, func(r *rmclient.AppReport) bool { return r.State == cluster.StateRunning })
		if err != nil {
			return cluster.Started{}, err
		}
		if r.State != cluster.StateRunning {
			return cluster.Started{}, fmt.Errorf("%w: Yarn application has already ended! It might have been killed or unable to launch application master. State %s, diagnostics: %s",
				cluster.ErrAppFailed, r.State, r.Diagnostics)
		}
		if r.AM != nil {
			// From the driver's env, which authenticates with the
			// application's secret as the AM does.
			if ref, err := env.RefFromProto(r.AM); err == nil {
				amRef = ref
				losses.SetAM(ref)
			}
		}
		// Monitor the application: if it ends while the driver runs (killed,
		// too many executor failures), stop the application.
		monStart.Do(func() {
			go func() {
				defer close(monDone)
				r, err := h.WaitFor(appCtx, func(*rmclient.AppReport) bool {
					select {
					case <-monitor:
						return true
					default:
						return false
					}
				})
				if err == nil && r.State.Terminal() {
					cancelApp(fmt.Errorf("%w: YARN application has exited unexpectedly with state %s! Diagnostics: %s", cluster.ErrAppFailed, r.State, r.Diagnostics))
				}
			}()
		})
		up := driverrun.WaitBackendReady(sctx, d, conf, numExec, log)
		fmt.Fprintf(cfg.Stderr, "Executors registered: %d of %d\n", up, numExec)
		return cluster.Started{Driver: d, AppID: h.AppID(), Executors: losses}, nil
	}
	waitTime, err := conf.GetDuration(cluster.KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	started, startFn := driverrun.NoticeStart(start)
	bar := driverrun.StartConsoleProgress(cfg.Stderr, driverrun.ProgressInterval(conf), prog.Snapshot)
	sc = cluster.NewAppContext("", conf, log, bar.Above(cfg.Stdout), startFn)
	appErr := driverrun.RunApp(appCtx, fn, sc, cfg.Args, started, waitTime)
	bar.Stop()
	close(progStop)
	progStart.Do(func() { close(progDone) })
	<-progDone
	if cause := context.Cause(appCtx); appErr != nil && cause != nil && appCtx.Err() != nil && !strings.Contains(appErr.Error(), cause.Error()) {
		appErr = fmt.Errorf("%w (%v)", cause, appErr)
	}
	close(monitor)
	monStart.Do(func() { close(monDone) })
	<-monDone
	if d := sc.StartedDriver(); d != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("stopping the driver")
		}
		cancel()
	}
	if handle != nil {
		final, diag := cluster.FinalSucceeded, ""
		if appErr != nil {
			final, diag = cluster.FinalFailed, "User application failed: "+appErr.Error()
		}
		told := false
		if amRef != nil && ctx.Err() == nil {
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := amRef.AskSync(fctx, &messages.AmDriverFinished{FinalStatus: messages.RmFinalStatus(final), Diagnostics: diag})
			cancel()
			told = err == nil
		}
		if !told {
			// Interrupted, or the AM is unreachable: end the application here.
			why := "Application killed: the driver ended before its application master could be told."
			if ctx.Err() != nil {
				why = "Application killed: the submitting command was interrupted."
			}
			kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, kerr := client.Kill(kctx, handle.AppID(), why)
			cancel()
			if kerr == nil && ctx.Err() != nil && appErr != nil {
				appErr = fmt.Errorf("%w: killed application %s", appErr, handle.AppID())
			}
		}
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _ = handle.WaitFor(wctx, func(r *rmclient.AppReport) bool { return r.State.Terminal() })
		cancel()
	}
	if env != nil {
		cluster.ShutdownEnv(env, log)
	}
	return appErr
}
