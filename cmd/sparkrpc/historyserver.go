package main

import (
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/webui"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newHistoryServerCmd) }

// historyServerFlags are history-server's flags.
type historyServerFlags struct {
	host, bind, dir string
	port            int
	confs           []string
	propertiesFile  string
}

func newHistoryServerCmd() *cobra.Command {
	var f historyServerFlags
	cmd := &cobra.Command{
		Use:   "history-server [--dir DIR] [--port PORT]",
		Short: "Serve the pages of finished and running applications from their event logs",
		Long: `History-server (Spark's start-history-server.sh) serves the applications whose
drivers wrote event logs (spark.eventLog.enabled) to --dir
(spark.history.fs.logDirectory, default /tmp/spark-events): a list of the
finished ones and, with ?showIncomplete=true, of those still running; each
one's jobs, tasks, executors, timeline and environment under
/history/APP_ID/, drawn by the templates of the driver's own UI; and Spark's
REST API under /api/v1/applications (?status=completed|running).

It reads the folder again every spark.history.fs.update.interval (10s),
reading only what logs still being written have gained, and keeps the pages
of spark.history.retainedApplications (50) applications in memory. A log
that is cut short or holds lines it cannot read is shown as far as it can
be, with what could not be read.

It prints "HistoryServer web UI at URL" once it listens on --port
(spark.history.ui.port, 18080), and runs until SIGINT or SIGTERM. A port in
use is retried on the next ones up to spark.port.maxRetries (16) times.
With spark.authenticate, its pages require the shared secret as the other
UIs do.`,
		Example: `  sparkrpc submit --master 'local-cluster[2,1,1024]' --conf spark.eventLog.enabled=true \
    --conf spark.eventLog.dir=/var/spark-events --class SparkPi spark-internal 100
  sparkrpc history-server --dir /var/spark-events`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistoryServer(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "the event logs' folder (default: spark.history.fs.logDirectory, else /tmp/spark-events)")
	fl.IntVar(&f.port, "port", -1, "the web UI's port (-1: spark.history.ui.port, else 18080; 0: a random port)")
	fl.StringVar(&f.host, "host", "127.0.0.1", "the host name or address browsers use to reach it")
	fl.StringVar(&f.bind, "bind-address", "", "the address to listen on (default: --host; 0.0.0.0 for every interface)")
	fl.StringVar(&f.propertiesFile, "properties-file", "", "a `FILE` of properties (key value or key=value lines)")
	fl.StringArrayVar(&f.confs, "conf", nil, "a configuration property `KEY=VALUE` (repeatable), e.g. spark.history.fs.update.interval=2s")
	return cmd
}

// runHistoryServer serves the history of f's folder until a signal stops
// it.
func runHistoryServer(cmd *cobra.Command, f *historyServerFlags) error {
	if f.bind == "" {
		f.bind = f.host
	}
	conf, err := cli.ParseConfs(f.propertiesFile, f.confs)
	if err != nil {
		return err
	}
	if f.dir != "" {
		conf.Set(history.KeyLogDirectory, f.dir)
	}
	port := f.port
	if port < 0 {
		if port, err = conf.GetInt(history.KeyUIPort, history.DefaultUIPort); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	if port < 0 || port > 65535 {
		return cli.Usagef("the port must be between 0 and 65535, not %d", port)
	}
	log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.InfoLevel, "historyserver")
	cfg, err := history.ConfigFromConf(conf)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	cfg.Logger = log
	prov, err := history.NewProvider(cfg)
	if err != nil {
		return err
	}
	defer prov.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	re, err := webui.RedactionRegex(conf)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	ui, err := startDaemonUI("HistoryServer", func(opts ...webui.Option) http.Handler {
		return webui.NewHistoryServerUI(prov, opts...)
	}, conf, f.bind, f.host, port, cmd.OutOrStdout(), log, webui.WithRedaction(re), webui.WithMetrics(historyMetrics(prov)))
	if err != nil {
		return err
	}
	defer stopDaemonUI(ui)
	<-ctx.Done()
	stop()
	log.Info().Msg("shutting down")
	return nil
}

// historyMetrics returns the history server's /metrics: the Go runtime's
// and the process's, and the applications it lists.
func historyMetrics(prov *history.Provider) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: actor.MetricsNamespace, Name: "history_applications",
			Help: "applications whose event logs the history server lists, finished or not"},
			func() float64 { return float64(len(prov.Applications())) }))
	return actor.MetricsHandler(reg)
}
