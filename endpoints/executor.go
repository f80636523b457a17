package endpoints

// This file holds the executor process: ExecutorConfig, RunExecutor, and the
// fetch of the application's configuration from the driver.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// ExecutorConfig is what an executor process is started with (the flags of
// Spark's CoarseGrainedExecutorBackend).
type ExecutorConfig struct {
	// DriverURL is the driver's Driver.URL (required).
	DriverURL string
	// ExecutorID is the executor's id, unique in the application (required).
	ExecutorID string
	// BindAddress is the address the executor binds to; informational for
	// an executor in client mode.
	BindAddress string
	// Hostname is the executor's host as the driver sees it (default
	// BindAddress, else "localhost").
	Hostname string
	// AppID is the application id (spark.app.id).
	AppID string
	// Cores is the number of tasks the executor runs at once (required, > 0).
	Cores int
	// ResourceProfileID is the executor's resource profile (default 0).
	ResourceProfileID int
	// LogURLs and Attributes are passed to the driver as they are.
	LogURLs    map[string]string
	Attributes map[string]string
	// FilesDir is where the executor fetches the files the application
	// added (TaskContext.FilesDir; Spark's SparkFiles root). Default: a
	// temporary folder of the executor's own, removed when RunExecutor
	// returns. The executor of a container (package launcher) gives ".",
	// its working folder, as Spark's executors do.
	FilesDir string
}

func (c *ExecutorConfig) validate() error {
	var missing []string
	if c.DriverURL == "" {
		missing = append(missing, "DriverURL")
	}
	if c.ExecutorID == "" {
		missing = append(missing, "ExecutorID")
	}
	if c.Cores <= 0 {
		missing = append(missing, "Cores (> 0)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: executor config needs %s", ErrInvalidConfig, strings.Join(missing, ", "))
	}
	if c.Hostname == "" {
		c.Hostname = c.BindAddress
	}
	if c.Hostname == "" {
		c.Hostname = "localhost"
	}
	return nil
}

// driverPropsFetchTries is how many times the config fetcher looks the
// driver up (Spark's SPARK_EXECUTOR_DRIVER_PROPS_FETCHER_MAX_ATTEMPTS).
const driverPropsFetchTries = 3

// RunExecutor runs an executor until it stops: the whole executor process
// but os.Exit. It starts a config-fetcher env, looks the driver up (3
// tries), asks it for the application's configuration
// (RetrieveSparkAppConfig), builds its conf from the driver's properties,
// starts its own env, registers the Executor endpoint — which registers with
// the driver — and waits.
//
// It returns nil for a clean stop (the driver sent StopExecutor, or ctx
// was cancelled) and an *ExitError otherwise: code 1 when the registration
// was refused or the driver went away, ExitCodeHeartbeatFailure when
// heartbeats failed too often.
//
// Cancelling ctx stops the executor gracefully: the driver is told to send
// it no more tasks (ExecutorDecommissioning), the running tasks finish, the
// driver is told it is gone (RemoveExecutor), and RunExecutor returns nil.
func RunExecutor(ctx context.Context, cfg ExecutorConfig, opts ...ExecutorOption) error {
	o := executorOptions{stopTimeout: 10 * time.Second, lookupTries: driverPropsFetchTries}
	for _, opt := range opts {
		opt.applyExecutor(&o)
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	if o.newEnv == nil {
		return ErrNoEnvFactory
	}
	base := zerolog.Nop()
	if o.logger != nil {
		base = *o.logger
	}
	lg := base.With().Str("component", "executor").Str("executor", cfg.ExecutorID).Logger()
	if cfg.FilesDir == "" {
		dir, err := os.MkdirTemp("", "sparkrpc-executor-files-")
		if err != nil {
			return &ExitError{Code: 1, Reason: "Cannot create the executor's files folder", Err: err}
		}
		defer os.RemoveAll(dir)
		cfg.FilesDir = dir
	}
	local := o.conf
	if local == nil {
		local = actor.NewConf()
	}
	props, fetcherDone, err := fetchDriverProperties(ctx, cfg, local, o, lg)
	defer func() { <-fetcherDone }()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return &ExitError{Code: 1, Reason: "Cannot fetch the application's configuration from " + cfg.DriverURL, Err: err}
	}
	conf := executorConf(local, props, cfg)
	env, err := o.newEnv("sparkExecutor", conf)
	if err != nil {
		return &ExitError{Code: 1, Reason: "Cannot create the executor's env", Err: err}
	}
	b, err := newExecutorBackend(env, cfg, conf, o, lg)
	if err == nil {
		_, err = env.RegisterEndpoint(ExecutorEndpointName, b)
	}
	if err != nil {
		shutdownEnv(env, o.stopTimeout, lg)
		return &ExitError{Code: 1, Reason: "Cannot start the executor", Err: err}
	}
	select {
	case <-b.finished:
	case <-ctx.Done():
		b.decommission()
		<-b.finished
	case <-env.Terminated():
		b.finish()
	}
	shutdownEnv(env, o.stopTimeout, lg)
	return b.result()
}

func shutdownEnv(env *actor.Env, timeout time.Duration, lg zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := env.Shutdown(ctx); err != nil {
		lg.Warn().Err(err).Msg("env shutdown")
	}
}

// fetchDriverProperties is the fetcher step: a client env that asks the
// driver for its properties. The fetcher env shuts down in the background;
// the returned channel is closed once it has.
func fetchDriverProperties(ctx context.Context, cfg ExecutorConfig, local *actor.Conf, o executorOptions, lg zerolog.Logger) (map[string]string, <-chan struct{}, error) {
	done := make(chan struct{})
	fetcher, err := o.newEnv("driverPropsFetcher", local.Clone())
	if err != nil {
		close(done)
		return nil, done, err
	}
	defer func() {
		go func() {
			defer close(done)
			shutdownEnv(fetcher, o.stopTimeout, lg)
		}()
	}()
	var driver *actor.Ref
	for i := range o.lookupTries {
		driver, err = fetcher.SetupEndpointRefByURI(ctx, cfg.DriverURL)
		if err == nil || ctx.Err() != nil || i == o.lookupTries-1 {
			break
		}
		lg.Warn().Err(err).Int("attempt", i+1).Msg("driver lookup failed; retrying")
		t := time.NewTimer(time.Duration(i+1) * 100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	if err != nil {
		return nil, done, err
	}
	res, err := actor.ResultAs[*messages.SparkAppConfig](driver.Ask(ctx, &messages.RetrieveSparkAppConfig{
		ResourceProfileId: int32(cfg.ResourceProfileID)}))
	if err != nil {
		return nil, done, err
	}
	return res.GetSparkProperties(), done, nil
}

// isExecutorStartupConf reports whether the executor's own value of key wins
// over the driver's (Spark's SparkConf.isExecutorStartupConf).
func isExecutorStartupConf(key string) bool {
	return (strings.HasPrefix(key, "spark.auth") && key != "spark.authenticate.secret") ||
		strings.HasPrefix(key, "spark.rpc") || strings.HasPrefix(key, "spark.network") ||
		strings.HasPrefix(key, "spark.ssl") ||
		(strings.HasPrefix(key, "spark.") && strings.HasSuffix(key, ".port")) || key == "spark.port.maxRetries"
}

func executorConf(local *actor.Conf, props map[string]string, cfg ExecutorConfig) *actor.Conf {
	conf := local.Clone()
	for k, v := range props {
		if isExecutorStartupConf(k) {
			conf.SetIfMissing(k, v)
		} else {
			conf.Set(k, v)
		}
	}
	if cfg.AppID != "" {
		conf.Set("spark.app.id", cfg.AppID)
	}
	conf.Set("spark.executor.id", cfg.ExecutorID)
	return conf
}
