package launcher

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

// runKubernetesAction is --kill and --status NAMESPACE:DRIVER_POD on a
// k8s:// master.
func runKubernetesAction(ctx context.Context, cmd *cobra.Command, master cluster.Master, f *submitFlags) error {
	// As every client command reads them: a secret on the command line is
	// refused, and the properties file is where credentials belong.
	conf, err := cli.DaemonConf(f.propertiesFile, f.confs)
	if err != nil {
		return err
	}
	id := f.kill + f.status
	if _, _, err := kubernetes.ParseSubmissionID(id, "default"); err != nil {
		return cli.Usagef("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	op := kubernetes.Status
	if f.kill != "" {
		op = kubernetes.Kill
	}
	if err := op(ctx, master, conf, id, cmd.OutOrStdout()); err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	return nil
}

// newDriverCmd is what a cluster-mode driver pod runs.
func newDriverCmd() *cobra.Command {
	var class, master string
	var confs []string
	cmd := &cobra.Command{
		Use:    "driver --master k8s://URL --class APP [--conf KEY=VALUE]... [-- ARGS]",
		Short:  "Run an application's driver in a Kubernetes driver pod (started by submit --deploy-mode cluster)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := cluster.ParseMaster(master)
			if err != nil || m.Kind != cluster.MasterKubernetes {
				return cli.Usagef("--master must be a k8s:// master (%v)", err)
			}
			conf := actor.NewConf()
			for _, kv := range confs {
				if err := conf.SetFromArg(kv); err != nil {
					return cli.Usagef("%v", err)
				}
			}
			log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.InfoLevel, "driver")
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = kubernetes.RunDriverPod(ctx, cluster.SubmitConfig{Master: m, Class: class, Args: args, Conf: conf,
				Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(), Logger: log})
			var ue *cluster.UnknownClassError
			if errors.As(err, &ue) {
				return cli.Usagef("%v", err)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&class, "class", "", "the application to run")
	cmd.Flags().StringVar(&master, "master", "", "the k8s:// master")
	cmd.Flags().StringArrayVar(&confs, "conf", nil, "a configuration property KEY=VALUE (repeatable)")
	return cmd
}
