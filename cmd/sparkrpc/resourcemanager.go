package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/webui"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newResourceManagerCmd) }

// resourceManagerFlags are resourcemanager's flags.
type resourceManagerFlags struct {
	host, bind, queues, staging string
	port, uiPort                int
	expiry                      time.Duration
	amExpiry                    time.Duration
	verbose                     bool
	confs                       []string
	propertiesFile              string
}

func newResourceManagerCmd() *cobra.Command {
	var f resourceManagerFlags
	cmd := &cobra.Command{
		Use:   "resourcemanager [--host HOST] [--port PORT]",
		Short: "Run the resource manager of a multi-machine cluster",
		Long: `Resourcemanager runs the cluster's resource manager until it gets SIGINT or SIGTERM.
Node managers register with it ('sparkrpc nodemanager --rm HOST:PORT') and
'sparkrpc submit --master rm://HOST:PORT' submits applications to it.

Its web UI (applications, nodes, /api/v1/applications, /metrics) listens on
--webui-port; it prints "ResourceManager web UI at http://HOST:PORT".

It prints "ResourceManager listening on rm://HOST:PORT" once it is up, its
web UI included. A
--port in use is retried on the next ports, each move logged, up to
spark.port.maxRetries (16) times; with --conf spark.port.maxRetries=0 a port
in use is an error.`,
		Example:               `  sparkrpc resourcemanager --host rm.example.com --bind-address 0.0.0.0 --port 8032`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResourceManager(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "the host name or address node managers and clients use to reach it")
	fl.StringVar(&f.propertiesFile, "properties-file", "", "a `FILE` of properties (key value or key=value lines), e.g. spark.authenticate and spark.authenticate.secret (mode 0600)")
	fl.StringVar(&f.bind, "bind-address", "", "the address to listen on (default: --host; 0.0.0.0 for every interface)")
	fl.IntVar(&f.port, "port", 8032, "the port to listen on (0: a random port)")
	fl.IntVar(&f.uiPort, "webui-port", webui.DefaultResourceManagerUIPort, "the web UI's port, on --bind-address (0: a random port; -1: no web UI)")
	fl.StringVar(&f.queues, "queues", "default", "comma-separated queues applications may be submitted to")
	fl.StringVar(&f.staging, "staging-dir", "", "the folder of the applications' staging folders (default: a temporary folder)")
	fl.DurationVar(&f.expiry, "node-expiry", 60*time.Second, "how long a node may miss heartbeats before it is lost")
	fl.DurationVar(&f.amExpiry, "am-expiry", resourcemanager.DefaultAMExpiry, "how long an application master may say nothing before its application fails")
	fl.BoolVar(&f.verbose, "verbose", false, "log at debug level")
	fl.StringArrayVar(&f.confs, "conf", nil, "a configuration property `KEY=VALUE` (repeatable), e.g. spark.port.maxRetries=0")
	return cmd
}

// runResourceManager runs the resource manager of f until a signal stops
// it.
func runResourceManager(cmd *cobra.Command, f *resourceManagerFlags) error {
	if f.bind == "" {
		f.bind = f.host
	}
	if err := checkDaemonPorts(f.port, f.uiPort); err != nil {
		return err
	}
	conf, err := cli.ParseConfs(f.propertiesFile, f.confs)
	if err != nil {
		return err
	}
	level := zerolog.InfoLevel
	if f.verbose {
		level = zerolog.DebugLevel
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := cli.NewLogger(cmd.ErrOrStderr(), level, "resourcemanager")
	// Application masters authenticate with their application's
	// secret, under its id.
	keys := cluster.NewAppKeys()
	env, transport, err := cli.Listen(cluster.TCPNetwork{BindHost: f.bind, AdvertiseHost: f.host, Logger: &log, AuthKeys: keys.Lookup},
		"sparkResourceManager", conf, f.port, log)
	if err != nil {
		return err
	}
	qs := splitQueues(f.queues)
	rm, err := resourcemanager.Start(env, resourcemanager.Config{Queues: qs, StagingDir: f.staging, NodeExpiry: f.expiry, AMExpiry: f.amExpiry, Logger: &log,
		AppKeys: keys, PeerKeyID: transport.PeerKeyID, AdminACLs: cluster.SplitList(conf.Get(cluster.KeyAdminACLs, ""))})
	if err != nil {
		cli.ShutdownEnv(env)
		return err
	}
	ui, err := startDaemonUI("ResourceManager", func(opts ...webui.Option) http.Handler {
		return webui.NewResourceManagerUI(rm.Ref(), append([]webui.Option{webui.WithMetrics(rm.MetricsHandler())}, opts...)...)
	}, conf, f.bind, f.host, f.uiPort, cmd.OutOrStdout(), log)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rm.Shutdown(sctx)
		cli.ShutdownEnv(env)
		return err
	}
	defer stopDaemonUI(ui)
	// The line scripts wait for: printed once everything is up, so that
	// a daemon that then fails (its UI's port taken) never printed it.
	fmt.Fprintf(cmd.OutOrStdout(), "ResourceManager listening on rm://%s\n", rm.Address().HostPort())
	<-ctx.Done()
	stop() // a second signal ends the process at once
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rm.Shutdown(sctx)
	return env.Shutdown(sctx)
}

// splitQueues returns the queues of --queues, a comma-separated list.
func splitQueues(queues string) []string {
	var qs []string
	for _, q := range strings.Split(queues, ",") {
		if q = strings.TrimSpace(q); q != "" {
			qs = append(qs, q)
		}
	}
	return qs
}
