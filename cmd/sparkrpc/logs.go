package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newLogsCmd) }

func newLogsCmd() *cobra.Command {
	var rm, container, files string
	var cf clientConfFlags
	cmd := &cobra.Command{
		Use:   "logs --rm HOST:PORT APP_ID [--container CONTAINER_ID] [--log-files NAMES]",
		Short: "Print the container logs of an application (yarn logs -applicationId)",
		Long: `Logs prints the logs of an application's containers (its application master
and executors), fetched from the node managers that ran them: for each
container, each file (stdout, then stderr) with a header naming the container,
its node and the file. Running containers' logs are printed as far as they
were written. Nodes the resource manager has lost are named on stderr.`,
		Example: `  sparkrpc logs --rm rm.example.com:8032 application_1796232630389_0001
  sparkrpc logs --rm rm.example.com:8032 application_1796232630389_0001 --log-files stderr`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.Usagef("give one application id (APP_ID), not %d arguments", len(args))
			}
			return nil
		},
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			addr, err := rmAddress(rm)
			if err != nil {
				return err
			}
			appID := args[0]
			if _, _, err := cluster.ParseAppID(appID); err != nil {
				return cli.Usagef("%v", err)
			}
			wantFile := map[string]bool{}
			for _, f := range strings.Split(files, ",") {
				if f = strings.TrimSpace(f); f != "" {
					wantFile[f] = true
				}
			}
			return withRMClient(cmd, addr, &cf, "sparkrpcLogs", func(ctx context.Context, c *rmclient.Client) error {
				return printLogs(ctx, cmd, c, appID, container, wantFile)
			})
		},
	}
	cmd.Flags().StringVar(&rm, "rm", "", "the resource manager's `HOST:PORT` (or rm://HOST:PORT)")
	cmd.Flags().StringVar(&container, "container", "", "print only the logs of container `CONTAINER_ID`")
	cmd.Flags().StringVar(&files, "log-files", "", "comma-separated log file `NAMES` to print, e.g. stderr (default all)")
	cf.add(cmd)
	return cmd
}

// printLogs prints the logs of appID's containers (only container's when
// it is not empty, only the files wantFile names when it names any), each
// file under its header, as yarn logs does; nodes the resource manager has
// lost are named on stderr.
func printLogs(ctx context.Context, cmd *cobra.Command, c *rmclient.Client, appID, container string, wantFile map[string]bool) error {
	listing, err := c.ApplicationLogs(ctx, appID)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("cannot get the logs of %s: %w", appID, err)}
	}
	errOut := cmd.ErrOrStderr()
	for _, u := range listing.Unavailable {
		fmt.Fprintln(errOut, u)
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	printed := 0
	for _, l := range listing.Logs {
		if container != "" && l.ContainerID != container || len(wantFile) > 0 && !wantFile[l.Name] {
			continue
		}
		fmt.Fprintf(out, "Container: %s on %s\n%s\nLogType:%s\nLogLastModifiedTime:%s\nLogLength:%d\nLogContents:\n",
			l.ContainerID, l.NodeID, strings.Repeat("=", len("Container: "+l.ContainerID+" on "+l.NodeID)),
			l.Name, l.Modified.Format("Mon Jan 02 15:04:05 -0700 2006"), l.Size)
		lw := &lastByteWriter{w: out}
		n, err := c.CopyLog(ctx, appID, l, lw)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("reading %s of %s on %s: %w", l.Name, l.ContainerID, l.NodeID, err)}
		}
		if n > 0 && lw.last != '\n' {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "End of LogType:%s\n%s\n\n", l.Name, strings.Repeat("*", 80))
		printed++
	}
	if printed == 0 {
		what := "any container"
		if container != "" {
			what = "container " + container
		}
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("no log files of %s of %s found on the cluster's live nodes", what, appID)}
	}
	return nil
}

// lastByteWriter remembers the last byte written through it.
type lastByteWriter struct {
	w    io.Writer
	last byte
}

func (l *lastByteWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.last = p[len(p)-1]
	}
	return l.w.Write(p)
}
