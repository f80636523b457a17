package launcher

import (
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/spf13/cobra"
)

func newExecutorCmd() *cobra.Command {
	var cfg endpoints.ExecutorConfig
	var workerURL, propertiesFile string
	var confs []string
	cmd := &cobra.Command{
		Use:   "executor --driver-url URL --executor-id ID --hostname HOST --cores N --app-id APP_ID [--resourceProfileId N]",
		Short: "Run an executor (Spark's CoarseGrainedExecutorBackend)",
		Long: `Executor connects to the driver at --driver-url, fetches the application's
configuration, registers as --executor-id and runs the tasks it is given
until the driver stops it. Application masters start it in containers,
with --properties-file naming the conf file they write into the container;
with spark.authenticate its spark.authenticate.secret.file is the pipe on
which the node manager hands the application's secret (read once).

On SIGTERM it stops taking tasks, finishes the running ones, tells the driver
and exits 0. It exits 1 when the driver refuses it or goes away.`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			var missing []string
			for _, f := range []string{"driver-url", "executor-id", "cores"} {
				if !cmd.Flags().Changed(f) {
					missing = append(missing, "--"+f)
				}
			}
			if len(missing) > 0 {
				return cli.Usagef("missing %s", strings.Join(missing, ", "))
			}
			if cfg.Cores < 1 {
				return cli.Usagef("--cores must be at least 1")
			}
			cfg.FilesDir = "." // a container's working folder, where --files are too
			cfg.LogURLs = logURLsFromEnv()
			conf, err := executorStartupConf(propertiesFile, confs)
			if err != nil {
				return err
			}
			// With spark.authenticate, the secret file (or the pipe of
			// the application's secret) is read once, here.
			if err := cli.InlineSecretFile(conf); err != nil {
				return err
			}
			log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.InfoLevel, "executor")
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = endpoints.RunExecutor(ctx, cfg, endpoints.WithEnvFactory(cluster.TCPNetwork{Logger: &log}.Client),
				endpoints.WithLogger(log), endpoints.WithExecutorConf(conf))
			var ee *endpoints.ExitError
			if errors.As(err, &ee) {
				return &cli.ExitError{Code: ee.Code, Err: err}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.DriverURL, "driver-url", "", "the driver's URL, spark://CoarseGrainedScheduler@HOST:PORT")
	fl.StringVar(&cfg.ExecutorID, "executor-id", "", "the executor's id, unique in the application")
	fl.StringVar(&cfg.BindAddress, "bind-address", "", "the address to bind to (informational: executors do not listen)")
	fl.StringVar(&cfg.Hostname, "hostname", "", "the executor's host as the driver sees it")
	fl.IntVar(&cfg.Cores, "cores", 0, "the number of tasks it runs at once")
	fl.StringVar(&cfg.AppID, "app-id", "", "the application id")
	fl.IntVar(&cfg.ResourceProfileID, "resourceProfileId", 0, "the executor's resource profile id")
	fl.StringVar(&workerURL, "worker-url", "", "ignored (standalone mode's worker)")
	fl.StringVar(&propertiesFile, "properties-file", "", "the executor's conf `FILE` (properties; its application master writes it into the container)")
	fl.StringArrayVar(&confs, "conf", nil, "a startup configuration property KEY=VALUE, used before the driver's (repeatable; "+
		netty.KeyAuthenticateSecret+" is refused: give "+netty.KeyAuthenticateSecretFile+")")
	return cmd
}

// executorStartupConf is the executor's own configuration: the conf file
// its application master wrote (--properties-file), then its --conf
// arguments (the keys it needs before it can reach the driver, such as
// spark.authenticate and spark.authenticate.secret.file). A secret on the
// command line is refused: any process of the machine could read it.
func executorStartupConf(propertiesFile string, confs []string) (*actor.Conf, error) {
	conf := actor.NewConf()
	if err := cli.LoadPropertiesFile(conf, propertiesFile); err != nil {
		return nil, err
	}
	for _, kv := range confs {
		if err := cli.SetConfArg(conf, kv); err != nil {
			return nil, err
		}
	}
	return conf, nil
}

// logURLsFromEnv returns where this container's logs can be read, by
// name ("stdout", "stderr"), from the SPARK_LOG_URL_* variables its node
// manager set, as Spark's executors read them.
func logURLsFromEnv() map[string]string {
	urls := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := strings.CutPrefix(k, "SPARK_LOG_URL_"); ok {
			urls[strings.ToLower(name)] = v
		}
	}
	return urls
}
