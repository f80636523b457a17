package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	_ "github.com/sparkrpc/sparkrpc/examples" // the example applications (SparkPi, WordCount, ...)
	"github.com/sparkrpc/sparkrpc/webui"
	"github.com/spf13/cobra"
)

func init() {
	subcommands = append(subcommands, newSubmitCmd, newApplicationMasterCmd)
}

type submitFlags struct {
	class, master, deployMode, name, queue   string
	driverMemory, executorMemory             string
	driverCores, executorCores, numExecutors int
	confs                                    []string
	propertiesFile                           string
	verbose, version                         bool
	kill, status                             string
}

func newSubmitCmd() *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit [options] [app arguments]",
		Short: "Submit an application (spark-submit)",
		Long: `Submit runs an application registered in this binary (--class) on a master:

  local[N], local[*]      driver and one executor with N cores in this process
  local-cluster[W,C,M]    a resource manager and W node managers (C cores, M MiB each)
                          embedded in this process; the driver/AM and executors are
                          child processes
  rm://host:port          a running 'sparkrpc resourcemanager'
  k8s://https://host:port a Kubernetes API server: executors (and, in cluster
                          mode, the driver) run in pods

It exits 0 only when the application succeeded. With --kill APP_ID or
--status APP_ID it kills or reports an application of an rm:// master.

Applications: ` + strings.Join(cluster.Apps(), ", "),
		Example: `  sparkrpc submit --master 'local-cluster[2,1,1024]' --class SparkPi 100
  sparkrpc submit --master local[4] --class WordCount README.md
  sparkrpc submit --master rm://rm.example.com:8032 --deploy-mode cluster --class SparkPi --num-executors 4 1000
  sparkrpc submit --master rm://rm.example.com:8032 --status application_1700000000000_0001`,
		Args:                  cobra.ArbitraryArgs,
		DisableFlagsInUseLine: true,
		// Everything after the application's class belongs to the
		// application, even what looks like a flag (as in spark-submit):
		// RunE parses submit's own flags itself.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, appArgs := splitAppArgs(args)
			cmd.InheritedFlags() // adds --log-level and --log-format to cmd.Flags()
			if err := cmd.Flags().Parse(own); err != nil {
				return &usageError{err: err}
			}
			if err := applyLogFlags(cmd); err != nil {
				return err
			}
			if help, _ := cmd.Flags().GetBool("help"); help {
				return cmd.Help()
			}
			return runSubmit(cmd, &f, append(cmd.Flags().Args(), appArgs...))
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	fl.BoolP("help", "h", false, "help for submit")
	fl.StringVar(&f.class, "class", "", "the application `APP` to run: one of the applications listed above")
	fl.StringVar(&f.master, "master", "local[*]", "`MASTER`: local[N], local[*], local-cluster[W,C,M], rm://host:port or k8s://https://host:port")
	fl.StringVar(&f.deployMode, "deploy-mode", "", "`MODE`: client (the driver runs here) or cluster (the driver runs in the application master); default client")
	fl.StringVar(&f.name, "name", "", "the application's `NAME` (default: the class)")
	fl.StringVar(&f.queue, "queue", "", "the resource manager's `QUEUE` (default \"default\")")
	fl.StringVar(&f.driverMemory, "driver-memory", "", "the driver's memory `SIZE`, e.g. 1g or 512m; in cluster mode the application master's container (default 1g)")
	fl.IntVar(&f.driverCores, "driver-cores", 0, "cores of the driver in cluster mode (default 1)")
	fl.StringVar(&f.executorMemory, "executor-memory", "", "each executor's memory `SIZE`, e.g. 1g or 512m (default 1g)")
	fl.IntVar(&f.executorCores, "executor-cores", 0, "cores per executor (default 1)")
	fl.IntVar(&f.numExecutors, "num-executors", 0, "number of executors (default 2; on local-cluster as many as fit)")
	fl.StringArrayVar(&f.confs, "conf", nil, "a configuration property `KEY=VALUE` (repeatable)")
	fl.StringVar(&f.propertiesFile, "properties-file", "", "a `FILE` of extra properties (key=value lines)")
	fl.BoolVar(&f.verbose, "verbose", false, "print the parsed arguments and log at info level")
	fl.StringVar(&f.kill, "kill", "", "kill the application `APP_ID` (rm:// master) or the driver pods `NAMESPACE:POD` (k8s:// master; glob patterns allowed)")
	fl.StringVar(&f.status, "status", "", "print the status of the application `APP_ID` (rm:// master) or of the driver pods `NAMESPACE:POD` (k8s:// master)")
	fl.BoolVar(&f.version, "version", false, "print the version and exit")
	return cmd
}

// splitAppArgs splits submit's command line after the application's class
// (--class APP or --class=APP): what follows is the application's.
func splitAppArgs(args []string) (own, app []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return args[:i], args[i+1:]
		case a == "--class" && i+1 < len(args):
			return args[:i+2], args[i+2:]
		case strings.HasPrefix(a, "--class="):
			return args[:i+1], args[i+1:]
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "=") && takesValue[a[2:]] && i+1 < len(args):
			i++ // the flag's value, even if it reads "--class"
		}
	}
	return args, nil
}

// takesValue names submit's flags that take a value.
var takesValue = map[string]bool{"master": true, "deploy-mode": true, "name": true, "queue": true, "driver-memory": true,
	"driver-cores": true, "executor-memory": true, "executor-cores": true, "num-executors": true, "conf": true,
	"properties-file": true, "kill": true, "status": true, "log-level": true, "log-format": true}

// runSubmit is submit once its flags are parsed: --version, --kill and
// --status, or the submission of the application f.class with args.
func runSubmit(cmd *cobra.Command, f *submitFlags, args []string) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.version {
		fmt.Fprintln(out, versionString())
		return nil
	}
	if f.kill != "" && f.status != "" {
		return usagef("--kill and --status cannot be used together")
	}
	// Signals interrupt every step from here on: a submission, a report or a kill.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	master, err := cluster.ParseMaster(f.master)
	if err != nil {
		return usagef("%v", err)
	}
	if f.kill != "" || f.status != "" {
		if f.class != "" || len(args) > 0 {
			return usagef("--kill and --status take no --class and no application arguments")
		}
		if master.Kind == cluster.MasterKubernetes {
			return runKubernetesAction(ctx, cmd, master, f)
		}
		return runAppAction(ctx, cmd, master, f)
	}
	if err := checkApplication(f.class, args); err != nil {
		return err
	}
	conf, err := submitConf(cmd.Flags().Changed, f, master)
	if err != nil {
		return err
	}
	level := zerolog.WarnLevel
	if f.verbose {
		level = zerolog.InfoLevel
		printParsed(errOut, f, master, conf, args)
	}
	err = managers.Submit(ctx, cluster.SubmitConfig{Master: master, Class: f.class, Args: args, Conf: conf,
		Stdout: out, Stderr: errOut, Logger: newLogger(errOut, level, "submit")})
	return submitError(err)
}

// checkApplication checks that --class names an application of this
// binary. Without --class, an application named as the first argument is
// shown where --class goes.
func checkApplication(class string, args []string) error {
	if class == "" {
		if len(args) > 0 {
			if _, ok := cluster.LookupApp(args[0]); ok {
				return usagef("missing application: give its name with --class, as in: submit [options] --class %s %s",
					args[0], strings.Join(args[1:], " "))
			}
		}
		return usagef("missing application: give its name with --class (one of: %s)", strings.Join(cluster.Apps(), ", "))
	}
	if _, ok := cluster.LookupApp(class); !ok {
		return usagef("unknown application %q given to --class (known: %s)", class, strings.Join(cluster.Apps(), ", "))
	}
	return nil
}

// submitConf returns the application's configuration: --properties-file
// and --conf, then the flags that were given (changed reports which), each
// over its key. It checks the deploy mode and the sizes and counts.
func submitConf(changed func(flag string) bool, f *submitFlags, master cluster.Master) (*actor.Conf, error) {
	conf, err := daemonConf(f.propertiesFile, f.confs)
	if err != nil {
		return nil, err
	}
	for _, s := range []struct{ flag, key, value string }{
		{"deploy-mode", cluster.KeyDeployMode, f.deployMode},
		{"name", cluster.KeyAppName, f.name},
		{"queue", cluster.KeyQueue, f.queue},
		{"driver-memory", cluster.KeyDriverMemory, f.driverMemory},
		{"driver-cores", cluster.KeyDriverCores, fmt.Sprint(f.driverCores)},
		{"executor-memory", cluster.KeyExecutorMemory, f.executorMemory},
		{"executor-cores", cluster.KeyExecutorCores, fmt.Sprint(f.executorCores)},
		{"num-executors", cluster.KeyNumExecutors, fmt.Sprint(f.numExecutors)},
	} {
		if changed(s.flag) {
			conf.Set(s.key, s.value)
		}
	}
	if mode := conf.Get(cluster.KeyDeployMode, "client"); mode != "client" && mode != "cluster" {
		return nil, usagef("--deploy-mode must be client or cluster, not %q", mode)
	}
	if master.Kind == cluster.MasterLocal && conf.Get(cluster.KeyDeployMode, "client") == "cluster" {
		return nil, usagef("cluster deploy mode is not compatible with master %q", f.master)
	}
	if err := checkResources(changed, conf); err != nil {
		return nil, err
	}
	return conf, nil
}

// checkResources checks the memory sizes and the counts of cores and
// executors of conf; an error names the flag if it was given (changed
// reports which), else the key.
func checkResources(changed func(flag string) bool, conf *actor.Conf) error {
	// origin names where a value came from: the flag if it was given, else
	// the configuration key (--conf or --properties-file).
	origin := func(flag, key string) string {
		if changed(flag) {
			return "--" + flag
		}
		return key
	}
	for _, c := range []struct{ flag, key string }{
		{"driver-memory", cluster.KeyDriverMemory}, {"executor-memory", cluster.KeyExecutorMemory}, {"", cluster.KeyAMMemory},
	} {
		if v, ok := conf.Lookup(c.key); ok {
			// The same check for every master: local ones ignore the size,
			// but a size that could never run a container is a mistake.
			if n, err := actor.ParseSize(v, 1<<20); err != nil || n < 1<<20 {
				return usagef("invalid memory %q for %s: give a size of at least 1m, such as 512m or 2g", v, origin(c.flag, c.key))
			}
		}
	}
	for _, c := range []struct {
		flag, key string
		min       int
	}{
		{"driver-cores", cluster.KeyDriverCores, 1}, {"executor-cores", cluster.KeyExecutorCores, 1}, {"num-executors", cluster.KeyNumExecutors, 0},
	} {
		if n, err := conf.GetInt(c.key, c.min); err != nil || n < c.min {
			return usagef("invalid value %q for %s: give a whole number of at least %d", conf.Get(c.key, ""), origin(c.flag, c.key), c.min)
		}
	}
	return nil
}

// submitError is the command's error for the result of a submission: a
// usage error for an unknown application, the application's exit code
// when it failed, else exit code 1.
func submitError(err error) error {
	if err == nil {
		return nil
	}
	var ue *cluster.UnknownClassError
	if errors.As(err, &ue) {
		return usagef("%v", err)
	}
	var xe *cluster.AMExitError
	if errors.As(err, &xe) {
		return &exitError{code: xe.Code, err: errors.New(xe.Reason)}
	}
	return &exitError{code: 1, err: err}
}

func printParsed(w io.Writer, f *submitFlags, master cluster.Master, conf *actor.Conf, args []string) {
	fmt.Fprintf(w, "Parsed arguments:\n  master                  %s\n  deployMode              %s\n  class                   %s\n  childArgs               [%s]\n  propertiesFile          %s\n\nSpark properties used:\n",
		master, conf.Get(cluster.KeyDeployMode, "client"), f.class, strings.Join(args, " "), f.propertiesFile)
	// Values that spark.redaction.regex matches, by key or by value, are
	// hidden as Spark hides them; a regex that does not compile hides all.
	re, _ := webui.RedactionRegex(conf)
	for _, kv := range webui.Redact(re, conf.All()) {
		fmt.Fprintf(w, "  (%s,%s)\n", kv[0], kv[1])
	}
	fmt.Fprintln(w)
}

// runAppAction is --kill and --status.
func runAppAction(ctx context.Context, cmd *cobra.Command, master cluster.Master, f *submitFlags) error {
	if master.Kind != cluster.MasterRM {
		return usagef("--kill and --status need a running resource manager: --master rm://host:port")
	}
	appID := f.kill + f.status
	if _, _, err := cluster.ParseAppID(appID); err != nil {
		return usagef("%v", err)
	}
	// Connection failures come back as the error of the call: no warning
	// before it.
	log := newLogger(cmd.ErrOrStderr(), zerolog.ErrorLevel, "submit")
	conf, err := parseConfs(f.propertiesFile, f.confs)
	if err != nil {
		return err
	}
	env, err := cluster.TCPNetwork{Logger: &log}.Client("sparkSubmit", conf)
	if err != nil {
		return err
	}
	defer shutdownEnv(env)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := rmclient.New(env, master.Address)
	out := cmd.OutOrStdout()
	if f.kill != "" {
		fmt.Fprintf(out, "Killing application %s\n", appID)
		killed, err := client.Kill(ctx, appID, "")
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("cannot kill %s: %w", appID, err)}
		}
		r, err := client.Report(ctx, appID)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		if killed {
			fmt.Fprintf(out, "Killed application %s (state: %s)\n", appID, r.State)
		} else {
			fmt.Fprintf(out, "Application %s had already ended (state: %s, final status: %s)\n", appID, r.State, r.FinalStatus)
		}
		return nil
	}
	r, err := client.Report(ctx, appID)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("cannot get the status of %s: %w", appID, err)}
	}
	fmt.Fprintf(out, "Application report for %s (state: %s)\n%s\n", appID, r.State, r)
	if r.TasksTotal > 0 {
		fmt.Fprintf(out, "\t tasks: %d done, %d running, of %d\n", r.TasksDone, r.TasksRunning, r.TasksTotal)
	}
	return nil
}

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
				return usagef("--rm: %v", err)
			}
			if clientMode == (driverURL == "") || !clientMode && class == "" {
				return usagef("give --class (cluster mode) or --client-mode with --driver-url")
			}
			appID := os.Getenv("SPARKRPC_APP_ID")
			if appID == "" {
				return usagef("SPARKRPC_APP_ID is not set: the application master runs in a container")
			}
			conf := actor.NewConf()
			if file, err := os.Open(cluster.StagingConfFile); err == nil {
				err = conf.LoadProperties(file)
				file.Close()
				if err != nil {
					return err
				}
			}
			if err := inlineSecretFile(conf); err != nil {
				return err
			}
			host := os.Getenv("NM_HOST")
			if host == "" {
				host = "127.0.0.1"
			}
			log := newLogger(cmd.ErrOrStderr(), zerolog.InfoLevel, "applicationmaster")
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = appmaster.Run(ctx, appmaster.Config{AppID: appID, ContainerID: os.Getenv("CONTAINER_ID"),
				ResourceManager: rmAddr, Class: class, Args: args, ClientMode: clientMode, DriverURL: driverURL, Conf: conf,
				Network: cluster.TCPNetwork{BindHost: host, Logger: &log}, Stdout: cmd.OutOrStdout(), Logger: log})
			var ee *cluster.AMExitError
			if errors.As(err, &ee) {
				return &exitError{code: ee.Code, err: errors.New(ee.Reason)}
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
