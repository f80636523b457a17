package cluster

// This file holds Submit, the entry point of spark-submit, with its
// configuration and the choice of master.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/webui"
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
	// Executable is the program that containers of an embedded cluster
	// (local-cluster) run when Program is empty: a program built on package
	// launcher, which plays the roles of application master and executor.
	// Package launcher sets it to its own program. With neither set, an
	// embedded cluster's Submit fails with ErrNoProgram: a program that
	// does not hand its command line to launcher.Run would take a
	// container's command line as its own and submit again.
	Executable string
	// Program is the primary resource (spark-submit's application jar):
	// the path of a program built on package launcher that holds the
	// application. A cluster manager that starts containers ships it to
	// them (on a resource manager: staged, then localized by the node
	// managers) and runs it there in the roles of application master and
	// executor. Empty: the application is compiled into the cluster's own
	// program (Spark's "spark-internal"), which the containers run.
	Program string
	// Files are local files (--files) placed in the working directory of
	// the driver in cluster mode and of every executor.
	Files []string
}

// validate checks the required fields.
func (cfg *SubmitConfig) validate() error {
	switch {
	case cfg.Master.Kind == 0:
		return ConfigError("SubmitConfig", "Master", "is required (see ParseMaster)")
	case cfg.Class == "":
		return ConfigError("SubmitConfig", "Class", "is required (the registered application's name)")
	}
	return nil
}

// ClusterManager runs applications on the masters it accepts, as Spark's
// ExternalClusterManager does: package cluster/local runs local[N],
// cluster/yarn local-cluster[W,C,M] and rm://, cluster/kubernetes k8s://.
// A new cluster manager is one package implementing it, and one entry in the
// list given to Submit (cluster/managers.All).
type ClusterManager interface {
	// Accepts reports whether the manager runs applications on m (Spark's
	// canCreate).
	Accepts(m Master) bool
	// Submit runs fn as cfg says and waits for it to end, as Submit
	// documents. cfg is complete: Conf and the writers are set, and
	// spark.submit.deployMode is "client" or "cluster".
	Submit(ctx context.Context, cfg SubmitConfig, fn AppFunc) error
}

// Submit runs an application on cfg.Master with the first of managers that
// accepts it, and waits for it to end (unless
// spark.yarn.submit.waitAppCompletion is false in cluster mode). It returns
// nil only when the application succeeded; otherwise the application's own
// error (local and client mode) or an *AppFailedError. A master no manager
// accepts is an error matching ErrInvalidMaster.
func Submit(ctx context.Context, cfg SubmitConfig, managers ...ClusterManager) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	for _, key := range []string{EnvContainerAppID, EnvPodAppID} {
		if app := os.Getenv(key); app != "" {
			return fmt.Errorf("%w: this process runs in a container of %s (%s is set), started to play the role of "+
				"application master, driver or executor, which only package launcher plays: main must hand its command line "+
				"over to launcher.Run (os.Exit(launcher.Run(os.Args[1:]))) instead of submitting", ErrInContainer, app, key)
		}
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
	fn, err := FindApp(cfg.Class)
	if err != nil && !(cfg.Program != "" && DeployMode(cfg.Conf) == "cluster") {
		return err
	}
	// In cluster mode the program shipped (Program) runs the application,
	// which this process need not have registered: the application master
	// finds it, or fails with ErrUnknownClass.
	conf := cfg.Conf
	conf.SetIfMissing(KeyAppName, cfg.Class)
	conf.Set(KeyMaster, cfg.Master.String())
	if wd, err := os.Getwd(); err == nil {
		conf.SetIfMissing(KeySubmitWorkingDir, wd)
	}
	// The driver may run elsewhere (cluster mode): the event log's folder
	// is made absolute here, and its keys checked before anything starts.
	eventlog.AbsDir(conf)
	if _, _, err := eventlog.ConfigFrom(conf); err != nil {
		return err
	}
	if err := webui.CheckDriverConf(conf); err != nil {
		return err
	}
	if _, err := ParseDriverConf(conf); err != nil {
		return err
	}
	if err := endpoints.CheckDriverConf(conf); err != nil {
		return err
	}
	if mode := DeployMode(conf); mode != "client" && mode != "cluster" {
		return fmt.Errorf("%w: deploy mode must be client or cluster, not %q", ErrInvalidState, mode)
	}
	// With dynamic allocation, every cluster manager starts with its
	// initial executors (Spark's getInitialTargetExecutorNumber).
	if n, warning, ok, err := endpoints.InitialExecutors(conf); err != nil {
		return err
	} else if ok {
		if warning != "" {
			cfg.Logger.Warn().Msg(warning)
		}
		conf.Set(KeyNumExecutors, strconv.Itoa(n))
	}
	for _, m := range managers {
		if m.Accepts(cfg.Master) {
			return m.Submit(ctx, cfg, fn)
		}
	}
	return fmt.Errorf("%w: %q: no cluster manager runs applications there", ErrInvalidMaster, cfg.Master.String())
}

// DeployMode returns conf's spark.submit.deployMode (default "client").
func DeployMode(conf *actor.Conf) string { return conf.Get(KeyDeployMode, "client") }
