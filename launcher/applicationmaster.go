package launcher

// This file holds the role of application master, which a resource
// manager starts in an application's first container.

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

// newApplicationMasterCmd is the command the resource manager starts in an
// application's first container.
func newApplicationMasterCmd() *cobra.Command {
	var (
		class, rm, driverURL string
		clientMode           bool
	)
	cmd := &cobra.Command{
		Use:    "applicationmaster --rm HOST:PORT (--class APP [-- ARGS] | --client-mode --driver-url URL)",
		Short:  "Run an application master (started by the resource manager in a container)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			rmAddr, err := actor.ParseHostPort(rm)
			if err != nil {
				return cli.Usagef("--rm: %v", err)
			}
			if clientMode == (driverURL == "") || !clientMode && class == "" {
				return cli.Usagef("give --class (cluster mode) or --client-mode with --driver-url")
			}
			appID := os.Getenv("SPARKRPC_APP_ID")
			if appID == "" {
				return cli.Usagef("SPARKRPC_APP_ID is not set: the application master runs in a container")
			}
			conf := actor.NewConf()
			if file, err := os.Open(cluster.StagingConfFile); err == nil {
				err = conf.LoadProperties(file)
				file.Close()
				if err != nil {
					return err
				}
			}
			if err := cli.InlineSecretFile(conf); err != nil {
				return err
			}
			host := os.Getenv("NM_HOST")
			if host == "" {
				host = "127.0.0.1"
			}
			log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.InfoLevel, "applicationmaster")
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = appmaster.Run(ctx, appmaster.Config{AppID: appID, ContainerID: os.Getenv("CONTAINER_ID"),
				ResourceManager: rmAddr, Class: class, Args: args, ClientMode: clientMode, DriverURL: driverURL, Conf: conf,
				Network: cluster.TCPNetwork{BindHost: host, Logger: &log}, Stdout: cmd.OutOrStdout(), Logger: log,
				LogURLs: containerLogURLs()})
			var ee *cluster.AMExitError
			if errors.As(err, &ee) {
				return &cli.ExitError{Code: ee.Code, Err: errors.New(ee.Reason)}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&class, "class", "", "the application to run as the driver")
	cmd.Flags().StringVar(&rm, "rm", "", "the resource manager's host:port")
	cmd.Flags().BoolVar(&clientMode, "client-mode", false, "only allocate executors for a driver running elsewhere")
	cmd.Flags().StringVar(&driverURL, "driver-url", "", "the driver's URL (client mode)")
	return cmd
}

// containerLogURLs returns where this container's logs can be read, by
// name ("stdout", "stderr"), from the SPARK_LOG_URL_* variables its node
// manager set.
func containerLogURLs() map[string]string {
	urls, _ := executorLogsAndAttributes(os.Environ())
	return urls
}
