package cluster

// This file holds local[N]: the driver and one executor in the submitting
// process, and running the application in the driver's goroutine.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// runLocal is local[N]: a driver env on loopback and one executor with N
// cores in a client-mode env, both in this process.
func runLocal(ctx context.Context, cfg SubmitConfig, fn AppFunc) error {
	appID := fmt.Sprintf("local-%d", time.Now().UnixMilli())
	conf := cfg.Conf
	conf.Set(KeyAppID, appID)
	log := cfg.Logger
	net := cfg.Network
	if net == nil {
		net = TCPNetwork{BindHost: "127.0.0.1", Logger: &log}
	}
	env, err := net.Listen("sparkDriver", conf, 0)
	if err != nil {
		return err
	}
	defer shutdownEnv(env, log)
	prog := &Progress{}
	var execDone chan error
	var stopExec context.CancelFunc
	var ui *driverUI
	defer func() { ui.stop() }()
	start := func(sctx context.Context) (*endpoints.Driver, error) {
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(log))
		if err != nil {
			return nil, err
		}
		ui = startDriverUI(d, net, appID, cfg.Stderr, log)
		var ectx context.Context
		ectx, stopExec = context.WithCancel(context.Background())
		execDone = make(chan error, 1)
		go func() {
			execDone <- endpoints.RunExecutor(ectx, endpoints.ExecutorConfig{DriverURL: d.URL(), ExecutorID: "driver",
				Hostname: "localhost", AppID: appID, Cores: cfg.Master.Cores},
				endpoints.WithEnvFactory(net.Client), endpoints.WithLogger(log))
		}()
		if err := d.WaitForExecutors(sctx, 1); err != nil {
			return nil, err
		}
		return d, nil
	}
	waitTime, err := conf.GetDuration(KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	started, start := noticeStart(start)
	bar := startConsoleProgress(cfg.Stderr, progressInterval(conf), prog.Snapshot)
	sc := NewAppContext(appID, conf, log, bar.Above(cfg.Stdout), start)
	appErr := runApp(ctx, fn, sc, cfg.Args, started, waitTime)
	bar.Stop()
	if d := sc.driver; d != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.Stop(sctx); err != nil {
			log.Warn().Err(err).Msg("stopping the driver")
		}
		cancel()
	}
	if stopExec != nil {
		select {
		case <-execDone:
		case <-time.After(10 * time.Second):
			stopExec()
			<-execDone
		}
		stopExec()
	}
	return appErr
}

// noticeStart returns start wrapped so that the returned channel closes
// when the application first asks for its driver.
func noticeStart(start func(context.Context) (*endpoints.Driver, error)) (<-chan struct{}, func(context.Context) (*endpoints.Driver, error)) {
	started := make(chan struct{})
	var once sync.Once
	return started, func(ctx context.Context) (*endpoints.Driver, error) {
		once.Do(func() { close(started) })
		return start(ctx)
	}
}

// runApp runs the application in the driver's goroutine and returns its
// error. An application that has not asked for its driver (SparkContext)
// within wait (spark.yarn.am.waitTime) is cancelled and fails as YARN's
// application master fails it: an *ExitError with code ExitSCNotInited.
func runApp(ctx context.Context, fn AppFunc, sc *AppContext, args []string, started <-chan struct{}, wait time.Duration) error {
	appCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go runUserApp(appCtx, fn, sc, args, done)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-started:
		return <-done
	case <-timer.C:
	}
	reason := fmt.Sprintf("SparkContext did not initialize after waiting for %d ms (%s). Please check earlier log output for errors. Failing the application.",
		wait.Milliseconds(), KeyAMWaitTime)
	cancel(errors.New(reason))
	select {
	case <-done:
	case <-time.After(10 * time.Second): // an application that ignores its ctx is left behind
	}
	return &ExitError{Code: ExitSCNotInited, Reason: reason}
}
