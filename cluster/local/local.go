package local

// This file holds local[N]: the driver and one executor in the submitting
// process, and running the application in the driver's goroutine.

import (
	"context"
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/driverrun"

	"github.com/sparkrpc/sparkrpc/cluster"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// run is local[N]: a driver env on loopback and one executor with N
// cores in a client-mode env, both in this process.
func run(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc) error {
	appID := fmt.Sprintf("local-%d", time.Now().UnixMilli())
	conf := cfg.Conf
	conf.Set(cluster.KeyAppID, appID)
	log := cfg.Logger
	net := cfg.Network
	if net == nil {
		net = cluster.TCPNetwork{BindHost: "127.0.0.1", Logger: &log}
	}
	env, err := net.Listen("sparkDriver", conf, 0)
	if err != nil {
		return err
	}
	defer cluster.ShutdownEnv(env, log)
	prog := &driverrun.Progress{}
	var execDone chan error
	var stopExec context.CancelFunc
	var ui *driverrun.UI
	defer func() { ui.Stop() }()
	start := func(sctx context.Context) (cluster.Started, error) {
		d, err := endpoints.NewDriver(env, endpoints.WithListener(prog), endpoints.WithLogger(log))
		if err != nil {
			return cluster.Started{}, err
		}
		ui = driverrun.StartUI(d, net, appID, cfg.Stderr, log)
		var ectx context.Context
		ectx, stopExec = context.WithCancel(context.Background())
		execDone = make(chan error, 1)
		go func() {
			execDone <- endpoints.RunExecutor(ectx, endpoints.ExecutorConfig{DriverURL: d.URL(), ExecutorID: "driver",
				Hostname: "localhost", AppID: appID, Cores: cfg.Master.Cores},
				endpoints.WithEnvFactory(net.Client), endpoints.WithLogger(log))
		}()
		if err := d.WaitForExecutors(sctx, 1); err != nil {
			return cluster.Started{}, err
		}
		return cluster.Started{Driver: d}, nil
	}
	waitTime, err := conf.GetDuration(cluster.KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	started, start := driverrun.NoticeStart(start)
	bar := driverrun.StartConsoleProgress(cfg.Stderr, driverrun.ProgressInterval(conf), prog.Snapshot)
	sc := cluster.NewAppContext(appID, conf, log, bar.Above(cfg.Stdout), start)
	appErr := driverrun.RunApp(ctx, fn, sc, cfg.Args, started, waitTime)
	bar.Stop()
	if d := sc.StartedDriver(); d != nil {
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

// Manager is the cluster manager of local[N]: the driver and one executor
// with N cores in the submitting process (client deploy mode only).
type Manager struct{}

// Accepts reports whether m is local[N].
func (Manager) Accepts(m cluster.Master) bool { return m.Kind == cluster.MasterLocal }

// Submit runs fn on local[N] and waits for it.
func (Manager) Submit(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc) error {
	if cluster.DeployMode(cfg.Conf) == "cluster" {
		return fmt.Errorf("%w: cluster deploy mode is not compatible with master %q", cluster.ErrInvalidMaster, cfg.Master.String())
	}
	return run(ctx, cfg, fn)
}
