package cluster

// This file holds Submit, the entry point of spark-submit, with its
// configuration and the choice of master.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
)

// Configuration keys of the embedded local cluster (not Spark's).
const (
	// KeyLocalClusterDir keeps the local cluster's folder (node logs,
	// staging) at this path instead of a temporary folder removed at exit.
	KeyLocalClusterDir = "spark.sparkrpc.localCluster.dir"
	// KeyNodeExpiry is the embedded resource manager's node expiry.
	KeyNodeExpiry = "spark.sparkrpc.rm.nodeExpiry"
	// KeySubmitWorkingDir is the submitting command's working folder, which
	// applications resolve relative file arguments against.
	KeySubmitWorkingDir = "spark.sparkrpc.submit.workingDir"
	// KeyContainerEnvWhitelist names, comma-separated, the variables of the
	// environment that an embedded local cluster's containers get beside
	// the defaults (NodeManagerConfig.EnvWhitelist).
	KeyContainerEnvWhitelist = "spark.sparkrpc.container.envWhitelist"
)

// SubmitConfig is what Submit runs: spark-submit's options, with
// everything but the master, the application and its arguments in Conf
// (spark.submit.deployMode, spark.app.name, spark.yarn.queue,
// spark.driver.memory, spark.executor.memory, spark.executor.cores,
// spark.executor.instances, ...). Master and Class are required (Submit
// fails with ErrInvalidConfig without them); every other field's zero value
// means its default.
type SubmitConfig struct {
	// Master is where the application runs (required; see ParseMaster).
	Master Master
	// Class is the registered application name (--class; required).
	Class string
	Args  []string
	// Conf is the submission's configuration (nil: empty). Submit sets
	// keys in it (spark.master, spark.app.id, defaults it fills in). With
	// spark.authenticate on a resource manager, its secret keys are the
	// cluster's (the client's); Submit then replaces them, in Conf, with the
	// application's generated secret, which the driver uses.
	Conf *actor.Conf
	// Stdout receives the application's output in local and client mode;
	// Stderr the submission's progress (state changes, the task progress
	// bar). Nil: discarded.
	Stdout, Stderr io.Writer
	// Logger is the logger of everything that runs in this process (the
	// zero Logger discards).
	Logger zerolog.Logger
	// Network creates this process's envs: the driver's (local and client
	// mode), the local-mode executor's and the submitting client's. Nil: a
	// TCPNetwork, on loopback for local[N]; on a resource manager the driver
	// binds to spark.driver.bindAddress and advertises spark.driver.host
	// (default: this machine's address on the route to the resource
	// manager). A local cluster's own envs are always on TCP, as its
	// containers are other processes.
	Network Network
	// Executable is what containers of an embedded cluster run (default
	// os.Executable()).
	Executable string
	// OnSubmitted, when set, is called with the handle once the application
	// is submitted to a resource manager.
	OnSubmitted func(h *AppHandle)
}

// validate checks the required fields.
func (cfg *SubmitConfig) validate() error {
	switch {
	case cfg.Master.Kind == 0:
		return configError("SubmitConfig", "Master", "is required (see ParseMaster)")
	case cfg.Class == "":
		return configError("SubmitConfig", "Class", "is required (the registered application's name)")
	}
	return nil
}

// Submit runs an application on cfg.Master and waits for it to end (unless
// spark.yarn.submit.waitAppCompletion is false in cluster mode). It returns
// nil only when the application succeeded; otherwise the application's own
// error (local and client mode) or an *AppFailedError. On local-cluster it
// refuses at once (with an error matching ErrResourceTooLarge) an AM or an
// executor larger than a node, as such an application could never run.
func Submit(ctx context.Context, cfg SubmitConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.Conf == nil {
		cfg.Conf = actor.NewConf()
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	fn, err := lookupApp(cfg.Class)
	if err != nil {
		return err
	}
	conf := cfg.Conf
	conf.SetIfMissing(KeyAppName, cfg.Class)
	conf.Set(KeyMaster, cfg.Master.String())
	if wd, err := os.Getwd(); err == nil {
		conf.SetIfMissing(KeySubmitWorkingDir, wd)
	}
	mode := conf.Get(KeyDeployMode, "client")
	if mode != "client" && mode != "cluster" {
		return fmt.Errorf("%w: deploy mode must be client or cluster, not %q", ErrInvalidState, mode)
	}
	switch cfg.Master.Kind {
	case MasterLocal:
		if mode == "cluster" {
			return fmt.Errorf("%w: cluster deploy mode is not compatible with master %q", ErrInvalidMaster, cfg.Master.String())
		}
		return runLocal(ctx, cfg, fn)
	case MasterLocalCluster:
		return runOnLocalCluster(ctx, cfg, fn, mode)
	case MasterRM:
		return runOnRM(ctx, cfg, fn, cfg.Master.Address, mode, false)
	}
	return fmt.Errorf("%w: %q", ErrInvalidMaster, cfg.Master.String())
}
