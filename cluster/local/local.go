package local

// This file holds local[N]: the driver and one executor in the submitting
// process, and running the application in the driver's goroutine.

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/driverrun"
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
	waitTime, err := conf.GetDuration(cluster.KeyAMWaitTime, "100s", time.Millisecond)
	if err != nil {
		return err
	}
	// The executor fetches the added files (--files, AddFile) into a
	// folder of its own, removed with it (RunExecutor's default).
	return driverrun.Run(ctx, driverrun.Spec{AppID: appID, Conf: conf, Network: net, Logger: log,
		Stdout: cfg.Stdout, Status: cfg.Stderr, ShowTrackingURL: true, Progress: cfg.Stderr, Fn: fn, Args: cfg.Args, WaitTime: waitTime,
		Files:   cfg.Files,
		Backend: &backend{net: net, appID: appID, cores: cfg.Master.Cores, conf: cluster.SubConf(conf, cluster.IsConnectionKey), log: log}})
}

// backend runs local[N]'s one executor, with N cores, in this process.
type backend struct {
	net   cluster.Network
	appID string
	cores int
	// conf is the application's connection keys (cluster.IsConnectionKey):
	// the executor in this process connects to the driver as the driver
	// listens (spark.authenticate and its secret, spark.ssl.rpc.*), and
	// fetches the rest from the driver, as every executor does.
	conf *actor.Conf
	log  zerolog.Logger

	app  *driverrun.App     // the application, which a failed executor ends
	stop context.CancelFunc // ends the executor; nil until it runs
	done chan error         // its result
}

func (b *backend) Prepare(_ context.Context, _ *actor.Env, app *driverrun.App) (endpoints.ClusterManager, error) {
	b.app = app
	return nil, nil
}

// Launch starts the executor, which registers with d.
func (b *backend) Launch(_ context.Context, d *endpoints.Driver, _ string) (driverrun.Launch, error) {
	var ectx context.Context
	ectx, b.stop = context.WithCancel(context.Background())
	b.done = make(chan error, 1)
	go func() {
		err := endpoints.RunExecutor(ectx, endpoints.ExecutorConfig{DriverURL: d.URL(), ExecutorID: "driver",
			Hostname: "localhost", AppID: b.appID, Cores: b.cores},
			endpoints.WithEnvFactory(b.net.Client), endpoints.WithExecutorConf(b.conf), endpoints.WithLogger(b.log))
		if err != nil && ectx.Err() == nil && b.app != nil {
			// The application's only executor is gone: it cannot go on,
			// and nothing else would end it.
			b.app.End(fmt.Errorf("local executor: %w", err))
		}
		b.done <- err
	}()
	return driverrun.Launch{Expected: 1}, nil
}

// Finish waits for the executor, which the driver's stop told to exit, and
// stops it after 10s.
func (b *backend) Finish(appErr error) error {
	if b.stop == nil {
		return appErr
	}
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.stop()
		<-b.done
	}
	b.stop()
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
