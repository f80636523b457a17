package appmaster

// This file holds the application master's entry point and configuration,
// shared by cluster mode (amdriver.go) and client mode (amlauncher.go).

import (
	"context"
	"io"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Config configures an application master. AppID, ResourceManager and,
// in client mode, DriverURL are required (Run fails with
// an *ExitError matching ErrInvalidConfig without them); every other
// field's zero value means its default.
type Config struct {
	// AppID (required) and ContainerID identify the attempt.
	AppID, ContainerID string
	// ResourceManager is the resource manager's address (required).
	ResourceManager actor.RpcAddress
	// Class and Args are the application to run as the driver (cluster
	// mode); an unknown or empty Class fails with exit code 15, as an
	// application that cannot be loaded.
	Class string
	Args  []string
	// ClientMode makes the AM only allocate executors for the driver at
	// DriverURL (Spark's ExecutorLauncher); DriverURL is then required.
	ClientMode bool
	DriverURL  string
	// Conf is the application's configuration (nil: empty).
	Conf *actor.Conf
	// Network creates the AM's env (it listens, for the driver's executors
	// and, in client mode, for the driver). Nil: a TCPNetwork on loopback
	// whose envs log to Logger.
	Network cluster.Network
	// Stdout receives the application's output (cluster mode; nil:
	// discarded).
	Stdout io.Writer
	// Logger is the AM's logger (the zero Logger discards).
	Logger zerolog.Logger
	// LogURLs are where the AM container's output can be read, by name
	// ("stdout", "stderr"): in cluster mode, the driver's logs.
	LogURLs map[string]string
}

// validate checks the required fields.
func (cfg *Config) validate() error {
	switch {
	case cfg.AppID == "":
		return cluster.ConfigError("appmaster.Config", "AppID", "is required")
	case cfg.ResourceManager.IsZero():
		return cluster.ConfigError("appmaster.Config", "ResourceManager", "is required (the resource manager's host:port)")
	case cfg.ClientMode && cfg.DriverURL == "":
		return cluster.ConfigError("appmaster.Config", "DriverURL", "is required in client mode")
	}
	return nil
}

// Run runs an application master until its application
// ends: the whole AM process but os.Exit. It returns nil when the
// application succeeded and an *ExitError with Spark's AM exit code
// otherwise: 10 for an invalid configuration, 13 when the application did not bring up its driver within
// spark.yarn.am.waitTime ("Timed out waiting for SparkContext."), 15 when the
// application is unknown or returned an error, 11 after too many executor
// failures (spark.executor.maxNumFailures), 16 when stopped early.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return &cluster.AMExitError{Code: cluster.ExitUncaughtException, Reason: err.Error(), Err: err}
	}
	if cfg.Conf == nil {
		cfg.Conf = actor.NewConf()
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Network == nil {
		log := cfg.Logger
		cfg.Network = cluster.TCPNetwork{Logger: &log}
	}
	cfg.Conf.Set(cluster.KeyAppID, cfg.AppID)
	am := &appMaster{cfg: cfg, conf: cfg.Conf,
		log: cfg.Logger.With().Str("component", "applicationmaster").Str("app", cfg.AppID).Logger()}
	if err := am.readSettings(); err != nil {
		return &cluster.AMExitError{Code: cluster.ExitUncaughtException, Reason: err.Error()}
	}
	if cfg.ClientMode {
		return am.runExecutorLauncher(ctx)
	}
	return am.runDriver(ctx)
}

type appMaster struct {
	cfg  Config
	conf *actor.Conf
	log  zerolog.Logger

	numExecutors int
	executor     cluster.Resource
	waitTime     time.Duration
}

func (am *appMaster) readSettings() error {
	var err error
	if am.numExecutors, err = am.conf.GetInt(cluster.KeyNumExecutors, 2); err != nil {
		return err
	}
	mem, err := am.conf.GetSizeAsBytes(cluster.KeyExecutorMemory, "1g", 1<<20)
	if err != nil {
		return err
	}
	cores, err := am.conf.GetInt(cluster.KeyExecutorCores, 1)
	if err != nil {
		return err
	}
	am.executor = cluster.Resource{MemoryMB: mem >> 20, Cores: cores}
	am.waitTime, err = am.conf.GetDuration(cluster.KeyAMWaitTime, "100s", time.Millisecond)
	return err
}

// fail logs and returns the exit error.
func (am *appMaster) exit(code int, reason string) error {
	am.log.Error().Int("exitCode", code).Msg(reason)
	return &cluster.AMExitError{Code: code, Reason: reason}
}

func (am *appMaster) unregister(rm *actor.Ref, final cluster.FinalStatus, diag string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	am.log.Info().Str("finalStatus", final.String()).Str("diagnostics", diag).Msg("Unregistering ApplicationMaster")
	if _, err := rm.AskSync(ctx, &messages.AmUnregister{AppId: am.cfg.AppID, FinalStatus: messages.RmFinalStatus(final), Diagnostics: diag}); err != nil {
		am.log.Warn().Err(err).Msg("cannot unregister from the resource manager")
	}
}
