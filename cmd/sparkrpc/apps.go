package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newAppsCmd) }

func newAppsCmd() *cobra.Command {
	var rm, states string
	var cf clientConfFlags
	cmd := &cobra.Command{
		Use:   "apps --rm HOST:PORT [--state STATES]",
		Short: "List the applications of a resource manager (yarn application -list)",
		Long: `Apps lists the applications a resource manager knows, oldest first: id,
name, user, queue, state, final status, progress (tasks done), start time and
tracking URL (the driver's web UI, http://HOST:PORT, once its application
master registered it; with spark.ui.enabled=false, the driver's spark://
address).

--state takes comma-separated states: NEW, SUBMITTED, ACCEPTED, RUNNING,
FINISHED, FAILED, KILLED, or ALL. The default, as YARN's, is the applications
that have not ended: SUBMITTED,ACCEPTED,RUNNING.`,
		Example: `  sparkrpc apps --rm rm.example.com:8032
  sparkrpc apps --rm rm.example.com:8032 --state FINISHED,FAILED,KILLED
  sparkrpc apps --rm rm.example.com:8032 --state ALL`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			addr, err := rmAddress(rm)
			if err != nil {
				return err
			}
			want, err := parseStates(states)
			if err != nil {
				return err
			}
			return withRMClient(cmd, addr, &cf, "sparkrpcApps", func(ctx context.Context, c *rmclient.Client) error {
				apps, err := c.Applications(ctx, want...)
				if err != nil {
					return &cli.ExitError{Code: 1, Err: fmt.Errorf("cannot list the applications of rm://%s: %w", addr.HostPort(), err)}
				}
				printApps(cmd.OutOrStdout(), want, apps)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&rm, "rm", "", "the resource manager's `HOST:PORT` (or rm://HOST:PORT)")
	cmd.Flags().StringVar(&states, "state", "", "comma-separated `STATES` to list, or ALL (default SUBMITTED,ACCEPTED,RUNNING)")
	cf.add(cmd)
	return cmd
}

// rmAddress parses --rm: host:port or rm://host:port.
func rmAddress(s string) (actor.RpcAddress, error) {
	if s == "" {
		return actor.RpcAddress{}, cli.Usagef("--rm HOST:PORT is required: the resource manager's address")
	}
	addr, err := actor.ParseHostPort(strings.TrimPrefix(s, "rm://"))
	if err != nil {
		return actor.RpcAddress{}, cli.Usagef("--rm: %v", err)
	}
	return addr, nil
}

// parseStates parses --state; empty means the active states, ALL every state.
func parseStates(s string) ([]cluster.AppState, error) {
	if strings.TrimSpace(s) == "" {
		return cluster.ActiveAppStates(), nil
	}
	var out []cluster.AppState
	for _, name := range strings.Split(s, ",") {
		if strings.EqualFold(strings.TrimSpace(name), "ALL") {
			return cluster.AppStates(), nil
		}
		st, err := cluster.ParseAppState(name)
		if err != nil {
			return nil, cli.Usagef("--state: %v", err)
		}
		out = append(out, st)
	}
	return out, nil
}

// clientConfFlags are the conf flags of a resource manager's client
// command: with spark.authenticate, where the cluster's secret is.
type clientConfFlags struct {
	propertiesFile string
	confs          []string
}

func (f *clientConfFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.propertiesFile, "properties-file", "", "a `FILE` of properties (key value or key=value lines), e.g. spark.authenticate and spark.authenticate.secret (mode 0600)")
	cmd.Flags().StringArrayVar(&f.confs, "conf", nil, "a configuration property `KEY=VALUE` (repeatable), e.g. spark.authenticate.secret.file=FILE")
}

// withRMClient runs fn with a client of the resource manager at addr; fn's
// context ends on SIGINT or SIGTERM.
func withRMClient(cmd *cobra.Command, addr actor.RpcAddress, cf *clientConfFlags, name string, fn func(context.Context, *rmclient.Client) error) error {
	conf, err := cli.ParseConfs(cf.propertiesFile, cf.confs)
	if err != nil {
		return err
	}
	// Connection failures come back as the error of the call, which the
	// command prints: no warning before it (unless --log-level asks).
	log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.ErrorLevel, name)
	env, err := cluster.TCPNetwork{Logger: &log}.Client(name, conf)
	if err != nil {
		return err
	}
	defer env.Shutdown(context.Background())
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return fn(ctx, rmclient.New(env, addr))
}

// printApps prints the list the way `yarn application -list` does.
func printApps(w io.Writer, states []cluster.AppState, apps []*rmclient.AppReport) {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.String()
	}
	fmt.Fprintf(w, "Total number of applications (states: [%s]): %d\n", strings.Join(names, ", "), len(apps))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Application-Id\tApplication-Name\tUser\tQueue\tState\tFinal-State\tProgress\tStart-Time\tTracking-URL")
	for _, a := range apps {
		progress := 0
		switch {
		case a.State == cluster.StateFinished:
			progress = 100
		case a.TasksTotal > 0:
			progress = a.TasksDone * 100 / a.TasksTotal
		}
		tracking := a.TrackingURL
		if tracking == "" && !a.State.Terminal() {
			tracking = a.DriverURL
		}
		if tracking == "" {
			tracking = "N/A"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d%%\t%s\t%s\n", a.ID, orNA(a.Name), orNA(a.User), orNA(a.Queue), a.State, a.FinalStatus,
			progress, a.Start.Format(time.DateTime+" MST"), tracking)
	}
	tw.Flush()
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}
