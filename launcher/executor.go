package launcher

import (
	"errors"
	"maps"
	"os"
	"os/signal"
	"slices"
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

It registers with the log URLs its environment gives as SPARK_LOG_URL_<FILE>
and the attributes it gives as SPARK_EXECUTOR_ATTRIBUTE_<NAME> (Kubernetes
executor pods: APP_ID, EXECUTOR_ID, HOSTNAME, KUBERNETES_NAMESPACE,
KUBERNETES_POD_NAME), for spark.ui.custom.executor.log.url.

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
			cfg.LogURLs, cfg.Attributes = executorLogsAndAttributes(os.Environ())
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

// executorLogsAndAttributes reads an executor's log URLs and attributes
// from its environment env ("KEY=VALUE" entries): SPARK_LOG_URL_<FILE> is
// the URL of log <file> (lower case), SPARK_EXECUTOR_ATTRIBUTE_<NAME> is
// attribute NAME, as Spark's CoarseGrainedExecutorBackend reads them. When
// the environment names no LOG_FILES attribute, the log files of the URLs
// are its value ("stderr,stdout"), as on YARN, for the {{FILE_NAME}} of
// spark.ui.custom.executor.log.url.
func executorLogsAndAttributes(env []string) (logURLs, attributes map[string]string) {
	logURLs, attributes = map[string]string{}, map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := strings.CutPrefix(k, "SPARK_LOG_URL_"); ok && name != "" {
			logURLs[strings.ToLower(name)] = v
		}
		if name, ok := strings.CutPrefix(k, "SPARK_EXECUTOR_ATTRIBUTE_"); ok && name != "" {
			attributes[name] = v
		}
	}
	if _, ok := attributes[endpoints.AttributeLogFiles]; !ok && len(logURLs) > 0 {
		attributes[endpoints.AttributeLogFiles] = strings.Join(slices.Sorted(maps.Keys(logURLs)), ",")
	}
	return logURLs, attributes
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
