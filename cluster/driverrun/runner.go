// This file holds Run, the one way every cluster manager runs a driver,
// and Backend, what each adds to it.

package driverrun

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// Spec is one application's driver, as Run runs it. Conf, Network, Fn and
// Backend are required.
type Spec struct {
	// AppID is the application's id; "" when the backend learns it only as
	// the driver starts (Launch.AppID).
	AppID string
	// Conf is the application's configuration. Run sets spark.driver.host
	// and spark.driver.port in it, and the UI's address
	// (spark.driver.appUIAddress).
	Conf *actor.Conf
	// Network creates the driver's env, listening on Port (0: any).
	Network cluster.Network
	Port    int
	// Logger is the driver's logger.
	Logger zerolog.Logger
	// Stdout receives the application's output.
	Stdout io.Writer
	// Status receives the lines a person follows the driver by
	// ("Executors registered: N of M", and the backend's, one at a time);
	// nil: they are logged.
	Status io.Writer
	// ShowTrackingURL writes "tracking URL: URL" to Status once the UI is
	// up (where no application report shows it).
	ShowTrackingURL bool
	// Progress, when not nil, gets the console progress bar of the
	// driver's tasks: drawn when it is a terminal, or as
	// KeyShowConsoleProgress says.
	Progress io.Writer
	// Tasks counts the driver's tasks (nil: a Progress of Run's own), for
	// a backend that reports them.
	Tasks *Progress
	// Fn is the application, run with Args.
	Fn   cluster.AppFunc
	Args []string
	// DriverLogURLs are where the driver's output can be read, by name
	// ("stdout", "stderr"): its container's, on a node manager.
	DriverLogURLs map[string]string
	// Files (submit's --files) are served by the driver to its executors
	// (Driver.AddFile) before the application runs.
	Files []string
	// WaitTime bounds the time the application takes to ask for its
	// driver (spark.yarn.am.waitTime); 0: no bound.
	WaitTime time.Duration
	// Backend brings up the driver's executors.
	Backend Backend
}

// Backend is what a cluster manager adds to the driver Run runs: where its
// executors come from, and what it does once the application has ended.
type Backend interface {
	// Prepare is called once the driver's env is up, before the
	// application runs. It returns the driver's cluster manager (nil:
	// none). app lets it end the application, e.g. when its executors
	// cannot be had.
	Prepare(ctx context.Context, env *actor.Env, app *App) (endpoints.ClusterManager, error)
	// Launch is called when the application first asks for its driver,
	// once driver d and its UI (at uiURL, "" without one) are up: it
	// brings up d's executors and says how many to wait for.
	Launch(ctx context.Context, d *endpoints.Driver, uiURL string) (Launch, error)
	// Finish is called once the application has returned with appErr (nil
	// on success), its driver has stopped and its context has ended. It
	// releases what Prepare and Launch took and returns the error Run
	// returns.
	Finish(appErr error) error
}

// UIOptioner is a Backend whose driver's UI takes options of its own (on
// Kubernetes, the reader of its executors' logs). UIOptions is called
// once, after Prepare, before the UI starts.
type UIOptioner interface {
	UIOptions() []webui.Option
}

// Launch is what Backend.Launch brought up.
type Launch struct {
	// Expected is the number of executors the readiness rule waits for
	// (see the package's doc).
	Expected int
	// AppID is the application's id when it was given only now, else "".
	AppID string
	// Executors lets the application change its executors; nil: it cannot.
	Executors cluster.ExecutorControl
}

// App is the running application as a Backend sees it.
type App struct {
	cancel context.CancelCauseFunc
	status func(string)
}

// End ends the application: its context is cancelled with cause, which
// becomes Run's error unless the application's own error says it already.
func (a *App) End(cause error) { a.cancel(cause) }

// Status writes a status line (see Spec.Status).
func (a *App) Status(line string) { a.status(line) }

// Run runs spec's application with its driver in this process, in the
// driver's goroutine (labelled DriverGoroutineLabel): the driver's env is created first; the
// driver, its UI and (Backend.Launch) its executors when the application
// first asks for its driver, which then waits for the readiness rule
// (the package's doc). When the application returns, its progress bar, UI
// and driver stop, and Backend.Finish decides the error Run returns.
func Run(ctx context.Context, spec Spec) error {
	conf, log := spec.Conf, spec.Logger
	// The driver's own keys are checked before anything starts.
	dc, err := cluster.ParseDriverConf(conf)
	if err != nil {
		return spec.Backend.Finish(err)
	}
	env, err := spec.Network.Listen("sparkDriver", conf, spec.Port)
	if err != nil {
		return spec.Backend.Finish(err)
	}
	defer cluster.ShutdownEnv(env, log)
	conf.Set("spark.driver.host", env.Address().Host)
	conf.Set("spark.driver.port", strconv.Itoa(env.Address().Port))

	appCtx, cancelApp := context.WithCancelCause(ctx)
	defer cancelApp(nil)
	// Lines come from the application's goroutine and the backend's.
	var statusMu sync.Mutex
	status := func(line string) {
		if spec.Status == nil {
			log.Info().Msg(line)
			return
		}
		statusMu.Lock()
		defer statusMu.Unlock()
		fmt.Fprintln(spec.Status, line)
	}
	app := &App{cancel: cancelApp, status: status}
	cm, err := spec.Backend.Prepare(appCtx, env, app)
	if err != nil {
		return spec.Backend.Finish(err)
	}
	prog := spec.Tasks
	if prog == nil {
		prog = &Progress{}
	}
	var ui *driverUI
	var alloc *endpoints.ExecutorAllocationManager
	var events *appEvents
	start := func(sctx context.Context) (cluster.Started, error) {
		return launch(sctx, appCtx, env, spec, dc, cm, prog, &launched{ui: &ui, alloc: &alloc, events: &events}, status)
	}
	started, startFn := noticeStart(start)
	out := spec.Stdout
	var bar *consoleProgress
	if spec.Progress != nil && showConsoleProgress(dc, spec.Progress) {
		bar = startConsoleProgress(spec.Progress, dc.ProgressInterval, prog.Snapshot)
		out = bar.Above(out)
	}
	sc := cluster.NewAppContext(spec.AppID, conf, log, out, startFn)
	appErr := runApp(appCtx, spec.Fn, sc, spec.Args, started, spec.WaitTime)
	if bar != nil {
		bar.Stop()
	}
	appErr = withCause(ctx, appCtx, appErr)
	events.end(sc.StartedDriver(), appErr)
	ui.Stop()
	if alloc != nil {
		alloc.Stop()
	}
	if d := sc.StartedDriver(); d != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("stopping the driver")
		}
		cancel()
	}
	events.close()
	cancelApp(nil)
	return spec.Backend.Finish(appErr)
}

// launched is where launch leaves what it started beside the driver, for
// Run to stop: its UI, its dynamic allocation and its event log (nil when
// off).
type launched struct {
	ui     **driverUI
	alloc  **endpoints.ExecutorAllocationManager
	events **appEvents
}

// launch brings up the driver on env, its UI, its dynamic allocation and
// its executors, and waits for the readiness rule (dc's); dynamic
// allocation starts then.
func launch(sctx, appCtx context.Context, env *actor.Env, spec Spec, dc cluster.DriverConf, cm endpoints.ClusterManager, prog *Progress,
	out *launched, status func(string)) (cluster.Started, error) {
	began := time.Now()
	events, err := newAppEvents(spec.Conf, spec.DriverLogURLs, spec.Logger)
	if err != nil {
		return cluster.Started{}, err
	}
	*out.events = events
	opts := append([]endpoints.DriverOption{endpoints.WithListener(prog), endpoints.WithLogger(spec.Logger)},
		events.driverOptions()...)
	if cm != nil {
		opts = append(opts, endpoints.WithClusterManager(cm))
	}
	d, err := endpoints.NewDriver(env, opts...)
	if err != nil {
		return cluster.Started{}, err
	}
	if spec.AppID != "" {
		if err := events.start(d, spec.AppID, began); err != nil {
			return cluster.Started{Driver: d}, err
		}
	}
	for _, f := range spec.Files {
		if _, err := d.AddFile(f); err != nil {
			return cluster.Started{Driver: d}, fmt.Errorf("--files: %w", err)
		}
	}
	alloc, err := newAllocation(d, cm, spec.Logger)
	if err != nil {
		return cluster.Started{Driver: d}, err
	}
	var uiOpts []webui.Option
	if alloc != nil {
		uiOpts = append(uiOpts, webui.WithExecutorAllocation(alloc))
	}
	if uo, ok := spec.Backend.(UIOptioner); ok {
		uiOpts = append(uiOpts, uo.UIOptions()...)
	}
	ui := startUI(d, spec.Network, spec.AppID, spec.DriverLogURLs, spec.Logger, uiOpts...)
	*out.ui = ui
	if u := ui.URL(); u != "" && spec.ShowTrackingURL {
		status("tracking URL: " + u)
	}
	l, err := spec.Backend.Launch(sctx, d, ui.URL())
	if err != nil {
		return cluster.Started{Driver: d}, err
	}
	if spec.AppID == "" {
		if err := events.start(d, l.AppID, began); err != nil {
			return cluster.Started{Driver: d}, err
		}
	}
	// The wait ends early when the application does (its backend ended it).
	wctx, cancel := context.WithCancel(sctx)
	stop := context.AfterFunc(appCtx, cancel)
	up := waitBackendReady(wctx, d, dc, l.Expected, spec.Logger)
	stop()
	cancel()
	if appCtx.Err() != nil {
		return cluster.Started{Driver: d}, context.Cause(appCtx)
	}
	status(fmt.Sprintf("Executors registered: %d of %d", up, l.Expected))
	if alloc != nil {
		*out.alloc = alloc
		alloc.Start()
	}
	return cluster.Started{Driver: d, AppID: l.AppID, Executors: l.Executors}, nil
}

// withCause is the application's error, told why its backend ended it: the
// cause of appCtx when the backend ended it (ctx, the caller's, still
// running), unless the application's error says it already.
func withCause(ctx, appCtx context.Context, appErr error) error {
	cause := context.Cause(appCtx)
	if cause == nil || appCtx.Err() == nil || ctx.Err() != nil {
		return appErr
	}
	switch {
	case appErr == nil:
		return cause
	case strings.Contains(appErr.Error(), cause.Error()):
		return appErr
	}
	return fmt.Errorf("%w (application: %v)", cause, appErr)
}
