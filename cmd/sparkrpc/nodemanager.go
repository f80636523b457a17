package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager/nmui"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/webui"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newNodeManagerCmd) }

// nodeManagerFlags are nodemanager's flags.
type nodeManagerFlags struct {
	rm, host, bind, dir string
	port, cores, uiPort int
	memory              string
	grace, regTimeout   time.Duration
	confs               []string
	propertiesFile      string
}

func newNodeManagerCmd() *cobra.Command {
	var f nodeManagerFlags
	cmd := &cobra.Command{
		Use:   "nodemanager --rm HOST:PORT [--memory SIZE] [--cores N]",
		Short: "Run a node manager: containers of a multi-machine cluster run under it",
		Long: `Nodemanager registers this machine with the resource manager and runs the
containers it is given (application masters and executors) as child
processes of this binary, each in its own process group, with its logs under
DIR/logs/APP_ID/CONTAINER_ID/{stdout,stderr}. On SIGINT or SIGTERM it stops
its containers (SIGTERM, then SIGKILL after --kill-grace) and exits.

While the resource manager does not answer, it retries with exponential
backoff, logging each attempt, for up to --register-timeout; then it exits 1.
A signal stops it at once in every state. A --port in use is retried on the
next ports, each move logged, up to spark.port.maxRetries (16) times; it
prints the address it listens on. Its web UI (running containers, /metrics)
listens on --webui-port, moving up the same way.`,
		Example:               `  sparkrpc nodemanager --rm rm.example.com:8032 --host node1.example.com --bind-address 0.0.0.0 --memory 8g --cores 4`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNodeManager(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.rm, "rm", "", "the resource manager's HOST:PORT (as it advertises it: container starts are taken from that identity only)")
	fl.StringVar(&f.propertiesFile, "properties-file", "", "a `FILE` of properties (key value or key=value lines), e.g. spark.authenticate and spark.authenticate.secret (mode 0600)")
	fl.StringVar(&f.host, "host", "127.0.0.1", "the host name or address the resource manager and application masters use to reach this node")
	fl.StringVar(&f.bind, "bind-address", "", "the address to listen on (default: --host; 0.0.0.0 for every interface)")
	fl.IntVar(&f.port, "port", 0, "the port to listen on (0: a random port)")
	fl.IntVar(&f.uiPort, "webui-port", webui.DefaultNodeManagerUIPort, "the web UI's port, on --bind-address (0: a random port; -1: no web UI)")
	fl.StringVar(&f.memory, "memory", "4g", "memory offered to containers, e.g. 8g or 2048m")
	fl.IntVar(&f.cores, "cores", runtime.NumCPU(), "cores offered to containers")
	fl.StringVar(&f.dir, "dir", "", "the node's folder for container working folders and logs "+
		"(default: a new private folder under the temporary folder, removed when the node manager stops)")
	fl.StringArrayVar(&f.confs, "conf", nil, "a configuration property `KEY=VALUE` (repeatable), e.g. spark.port.maxRetries=0")
	fl.DurationVar(&f.regTimeout, "register-timeout", 15*time.Minute, "how long to keep trying to register with the resource manager")
	fl.DurationVar(&f.grace, "kill-grace", 250*time.Millisecond, "time between SIGTERM and SIGKILL when a container is stopped")
	return cmd
}

// runNodeManager runs the node manager of f until a signal stops it.
func runNodeManager(cmd *cobra.Command, f *nodeManagerFlags) error {
	rmAddr, mem, err := f.check()
	if err != nil {
		return err
	}
	conf, err := cli.ParseConfs(f.propertiesFile, f.confs)
	if err != nil {
		return err
	}
	if f.bind == "" {
		f.bind = f.host
	}
	// Signals stop the node manager in every state, registration included.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.InfoLevel, "nodemanager")
	// The env's connection warnings would double the node manager's
	// own line per registration attempt; they show at debug level.
	envLog := log
	if log.GetLevel() > zerolog.DebugLevel {
		envLog = log.Level(max(log.GetLevel(), zerolog.ErrorLevel))
	}
	env, transport, err := cli.Listen(cluster.TCPNetwork{BindHost: f.bind, AdvertiseHost: f.host, Logger: &envLog}, "sparkNodeManager", conf, f.port, log)
	if err != nil {
		return err
	}
	defer cli.ShutdownEnv(env)
	if f.dir == "" {
		// A name no one can take first in the shared temporary folder,
		// private (0700), and gone with this node manager.
		if f.dir, err = os.MkdirTemp("", "sparkrpc-nodemanager-"); err != nil {
			return fmt.Errorf("the node's folder: %w", err)
		}
		defer privatefile.RemoveAll(f.dir)
	}
	// The web UI starts first, so that every container gets its log URLs;
	// it shows the node manager once it runs.
	var running nmui.Node
	ui, err := startDaemonUI("NodeManager", func(opts ...webui.Option) http.Handler {
		return nmui.Handler(env.Address().HostPort(), &running, opts...)
	}, conf, f.bind, f.host, f.uiPort, cmd.OutOrStdout(), log)
	if err != nil {
		return err
	}
	defer stopDaemonUI(ui)
	webUI := ""
	if ui != nil {
		webUI = ui.URL()
	}
	// Printed once the UI is up, so that a node manager that fails to
	// start it never printed it.
	fmt.Fprintf(cmd.OutOrStdout(), "NodeManager listening on %s\n", env.Address().HostPort())
	nm, err := nodemanager.Start(ctx, env, nodemanager.Config{ResourceManager: rmAddr,
		Capability: cluster.Resource{MemoryMB: mem >> 20, Cores: f.cores}, Dir: f.dir, KillGrace: f.grace,
		RegisterTimeout: f.regTimeout, Logger: &log, EnvWhitelist: cluster.SplitList(conf.Get(cluster.KeyContainerEnvWhitelist, "")),
		PeerKeyID: transport.PeerKeyID, AdminACLs: cluster.SplitList(conf.Get(cluster.KeyAdminACLs, "")), WebUI: webUI})
	if err != nil {
		if ctx.Err() != nil {
			log.Info().Msg("stopped before registering with the resource manager")
			return nil
		}
		return err
	}
	running.Set(nm)
	fmt.Fprintf(cmd.OutOrStdout(), "NodeManager %s registered with rm://%s (%d MB, %d cores, folder %s)\n",
		nm.NodeID(), rmAddr.HostPort(), mem>>20, f.cores, nm.Dir())
	<-ctx.Done()
	stop() // a second signal ends the process at once
	log.Info().Msg("shutting down: stopping containers")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return nm.Shutdown(sctx)
}

// check checks the flags and returns the resource manager's address and
// the memory offered, in bytes.
func (f *nodeManagerFlags) check() (actor.RpcAddress, int64, error) {
	if f.rm == "" {
		return actor.RpcAddress{}, 0, cli.Usagef("--rm HOST:PORT is required")
	}
	rmAddr, err := actor.ParseHostPort(f.rm)
	if err != nil {
		return actor.RpcAddress{}, 0, cli.Usagef("--rm: %v", err)
	}
	mem, err := actor.ParseSize(f.memory, 1<<20)
	if err != nil || mem < 1<<20 {
		return actor.RpcAddress{}, 0, cli.Usagef("--memory: invalid size %q", f.memory)
	}
	if f.cores < 1 {
		return actor.RpcAddress{}, 0, cli.Usagef("--cores must be at least 1")
	}
	if err := checkDaemonPorts(f.port, f.uiPort); err != nil {
		return actor.RpcAddress{}, 0, err
	}
	if f.regTimeout <= 0 {
		return actor.RpcAddress{}, 0, cli.Usagef("--register-timeout must be positive")
	}
	return rmAddr, mem, nil
}
