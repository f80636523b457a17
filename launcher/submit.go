package launcher

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
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/webui"
	"github.com/spf13/cobra"
)

// submitFlags are submit's options.
type submitFlags struct {
	class, master, deployMode, name, queue   string
	driverMemory, executorMemory             string
	driverCores, executorCores, numExecutors int
	confs                                    []string
	files                                    string
	propertiesFile                           string
	verbose, version                         bool
	kill, status                             string
}

// newSubmitCmd is `submit`, spark-submit.
func (p *program) newSubmitCmd() *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit [options] <program | " + InternalResource + "> [application arguments]",
		Short: "Submit an application (spark-submit)",
		Long: `Submit runs an application on a master, as spark-submit does. Options come
first, in any order; the first argument that is not an option is the primary
resource, and everything after it belongs to the application, even what looks
like an option.

The primary resource is the program that holds the application: the path of a
Go program built on package launcher (your own, whose applications --class
chooses from), or ` + InternalResource + ` for the applications compiled into this
program (` + appList() + `). On a cluster the program is what every container
runs.

Masters:
  local[N], local[*]      driver and one executor with N cores in this process
  local-cluster[W,C,M]    a resource manager and W node managers (C cores, M MiB each)
                          embedded in this process; the driver/AM and executors are
                          child processes
  rm://host:port          a running resource manager
  k8s://https://host:port a Kubernetes API server: executors (and, in cluster
                          mode, the driver) run in pods

It exits 0 only when the application succeeded. With --kill APP_ID or
--status APP_ID (and no primary resource) it kills or reports an application.`,
		Example: `  ` + p.name + ` submit --master 'local-cluster[2,1,1024]' --class SparkPi ` + InternalResource + ` 100
  ` + p.name + ` submit --master local[4] --class WordCount ` + InternalResource + ` README.md
  ` + p.name + ` submit --class SumOfSquares --master rm://rm.example.com:8032 --deploy-mode cluster \
      --executor-memory 512m --num-executors 4 ./sumofsquares 1 2 3
  ` + p.name + ` submit --master rm://rm.example.com:8032 --status application_1700000000000_0001`,
		Args:                  cobra.ArbitraryArgs,
		DisableFlagsInUseLine: true,
		// The application's arguments may look like flags: RunE parses
		// submit's own options itself, up to the primary resource.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.InheritedFlags() // adds --log-level and --log-format to cmd.Flags()
			if err := cmd.Flags().Parse(args); err != nil {
				return &cli.UsageError{Err: err}
			}
			if err := cli.ApplyLogFlags(cmd); err != nil {
				return err
			}
			if help, _ := cmd.Flags().GetBool("help"); help {
				return cmd.Help()
			}
			return p.runSubmit(cmd, &f, args, cmd.Flags().Args())
		},
	}
	fl := cmd.Flags()
	// Options end at the primary resource (SparkSubmitArguments).
	fl.SetInterspersed(false)
	fl.BoolP("help", "h", false, "help for submit")
	fl.StringVar(&f.class, "class", "", "the application `APP` to run: one the program registered (optional when it registered one)")
	fl.StringVar(&f.master, "master", "", "`MASTER`: local[N], local[*], local-cluster[W,C,M], rm://host:port or k8s://https://host:port "+
		"(default: spark.master from --conf or --properties-file, else local[*])")
	fl.StringVar(&f.deployMode, "deploy-mode", "", "`MODE`: client (the driver runs here) or cluster (the driver runs in the application master); default client")
	fl.StringVar(&f.name, "name", "", "the application's `NAME` (default: the class)")
	fl.StringVar(&f.queue, "queue", "", "the resource manager's `QUEUE` (default \"default\")")
	fl.StringVar(&f.driverMemory, "driver-memory", "", "the driver's memory `SIZE`, e.g. 1g or 512m; in cluster mode the application master's container (default 1g)")
	fl.IntVar(&f.driverCores, "driver-cores", 0, "cores of the driver in cluster mode (default 1)")
	fl.StringVar(&f.executorMemory, "executor-memory", "", "each executor's memory `SIZE`, e.g. 1g or 512m (default 1g)")
	fl.IntVar(&f.executorCores, "executor-cores", 0, "cores per executor (default 1)")
	fl.IntVar(&f.numExecutors, "num-executors", 0, "number of executors (default 2; on local-cluster as many as fit)")
	fl.StringArrayVar(&f.confs, "conf", nil, "a configuration property `KEY=VALUE` (repeatable)")
	fl.StringVar(&f.files, "files", "", "comma-separated `FILES` for the executors, where a task finds them with TaskContext.File "+
		"(on a cluster, in each container's working folder; on Kubernetes in cluster mode, local:///PATH in the image)")
	fl.StringVar(&f.propertiesFile, "properties-file", "", "a `FILE` of extra properties (key value or key=value lines)")
	fl.BoolVar(&f.verbose, "verbose", false, "print the parsed arguments and log at info level")
	fl.StringVar(&f.kill, "kill", "", "kill the application `APP_ID` (rm:// master) or the driver pods `NAMESPACE:POD` (k8s:// master; glob patterns allowed)")
	fl.StringVar(&f.status, "status", "", "print the status of the application `APP_ID` (rm:// master) or of the driver pods `NAMESPACE:POD` (k8s:// master)")
	fl.BoolVar(&f.version, "version", false, "print the version and exit")
	return cmd
}

// masterOf returns the master to submit to: --master when given (given),
// else spark.master from the properties file and --conf, else local[*], as
// spark-submit takes it. f.master is set to it.
func masterOf(given bool, f *submitFlags) (cluster.Master, error) {
	if !given {
		// Not DaemonConf, which reads the secret, and only once.
		conf, err := cli.PropertiesConf(f.propertiesFile, f.confs)
		if err != nil {
			return cluster.Master{}, err
		}
		f.master = conf.Get(cluster.KeyMaster, "local[*]")
	}
	m, err := cluster.ParseMaster(f.master)
	if err != nil {
		if !given {
			return m, cli.Usagef("%s: %v", cluster.KeyMaster, err)
		}
		return m, cli.Usagef("%v", err)
	}
	return m, nil
}

// appList lists the registered applications for the help text.
func appList() string {
	if apps := cluster.Apps(); len(apps) > 0 {
		return strings.Join(apps, ", ")
	}
	return "none"
}

// runSubmit is submit once its options are parsed: --version, --kill and
// --status, or the submission of the primary resource positional[0] with
// the application arguments positional[1:]. raw is submit's command line
// as given, which another program's submit receives unchanged.
func (p *program) runSubmit(cmd *cobra.Command, f *submitFlags, raw, positional []string) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.version {
		fmt.Fprintln(out, p.versionString())
		return nil
	}
	if f.kill != "" && f.status != "" {
		return cli.Usagef("--kill and --status cannot be used together")
	}
	// Signals interrupt every step from here on: a submission, a report or a kill.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a clean stop (the application killed, the
	// embedded cluster shut down), which may wait on a peer that does not
	// answer: a second signal ends the process at once, as it ends the
	// daemons. Not in the submit of a program that a submission was handed
	// over to: a Ctrl-C on a terminal reaches it, and the submit that
	// started it passes the signal on, so it gets two for one; the second
	// signal ends the submit that started it, and with it this one
	// (handOverProcAttr).
	if os.Getenv(envSubmitProgram) == "" {
		context.AfterFunc(ctx, stop)
	}
	master, err := masterOf(cmd.Flags().Changed("master"), f)
	if err != nil {
		return err
	}
	if f.kill != "" || f.status != "" {
		if f.class != "" || len(positional) > 0 {
			return cli.Usagef("--kill and --status take no --class, no primary resource and no application arguments")
		}
		if master.Kind == cluster.MasterKubernetes {
			return runKubernetesAction(ctx, cmd, master, f)
		}
		return runAppAction(ctx, cmd, master, f)
	}
	res, err := resolvePrimary(f.class, positional)
	if err != nil {
		return err
	}
	if res.other {
		return runOtherProgram(ctx, res.program, raw, out, errOut)
	}
	if f.class, err = chooseApplication(f.class, positional); err != nil {
		return err
	}
	conf, err := submitConf(cmd.Flags().Changed, f, master)
	if err != nil {
		return err
	}
	args := positional[1:]
	level := zerolog.WarnLevel
	if f.verbose {
		level = zerolog.InfoLevel
		printParsed(errOut, f, master, conf, res.program, args)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this program's executable, which the containers run: %w", err)
	}
	program := res.program
	if program == "" && !p.installed && master.Kind != cluster.MasterLocal {
		program = exe // spark-internal: this program holds the application
	}
	err = managers.Submit(ctx, cluster.SubmitConfig{Master: master, Class: f.class, Args: args, Conf: conf,
		Program: program, Files: cluster.SplitList(f.files), Executable: exe,
		Stdout: out, Stderr: errOut, Logger: cli.NewLogger(errOut, level, "submit")})
	return submitError(err)
}

// submitConf returns the application's configuration: --properties-file
// and --conf, then the flags that were given (changed reports which), each
// over its key. It checks the deploy mode and the sizes and counts.
func submitConf(changed func(flag string) bool, f *submitFlags, master cluster.Master) (*actor.Conf, error) {
	conf, err := cli.DaemonConf(f.propertiesFile, f.confs)
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
		return nil, cli.Usagef("--deploy-mode must be client or cluster, not %q", mode)
	}
	if master.Kind == cluster.MasterLocal && conf.Get(cluster.KeyDeployMode, "client") == "cluster" {
		return nil, cli.Usagef("cluster deploy mode is not compatible with master %q", f.master)
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
				return cli.Usagef("invalid memory %q for %s: give a size of at least 1m, such as 512m or 2g", v, origin(c.flag, c.key))
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
			return cli.Usagef("invalid value %q for %s: give a whole number of at least %d", conf.Get(c.key, ""), origin(c.flag, c.key), c.min)
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
		return cli.Usagef("%v", err)
	}
	var xe *cluster.AMExitError
	if errors.As(err, &xe) {
		return &cli.ExitError{Code: xe.Code, Err: errors.New(xe.Reason)}
	}
	return &cli.ExitError{Code: 1, Err: err}
}

func printParsed(w io.Writer, f *submitFlags, master cluster.Master, conf *actor.Conf, primary string, args []string) {
	if primary == "" {
		primary = InternalResource
	}
	fmt.Fprintf(w, "Parsed arguments:\n  master                  %s\n  deployMode              %s\n  class                   %s\n  primaryResource         %s\n  childArgs               [%s]\n  files                   %s\n  propertiesFile          %s\n\nSpark properties used:\n",
		master, conf.Get(cluster.KeyDeployMode, "client"), f.class, primary, strings.Join(args, " "), strings.Join(cluster.SplitList(f.files), ","), f.propertiesFile)
	// Values that spark.redaction.regex matches, by key or by value, are
	// hidden as Spark hides them, and the secret whatever the regex; a
	// regex that does not compile hides all.
	for _, kv := range webui.RedactConf(conf) {
		fmt.Fprintf(w, "  (%s,%s)\n", kv[0], kv[1])
	}
	fmt.Fprintln(w)
}

// runAppAction is --kill and --status.
func runAppAction(ctx context.Context, cmd *cobra.Command, master cluster.Master, f *submitFlags) error {
	if master.Kind != cluster.MasterRM {
		return cli.Usagef("--kill and --status need a running resource manager: --master rm://host:port")
	}
	appID := f.kill + f.status
	if _, _, err := cluster.ParseAppID(appID); err != nil {
		return cli.Usagef("%v", err)
	}
	// Connection failures come back as the error of the call: no warning
	// before it.
	log := cli.NewLogger(cmd.ErrOrStderr(), zerolog.ErrorLevel, "submit")
	conf, err := cli.ParseConfs(f.propertiesFile, f.confs)
	if err != nil {
		return err
	}
	env, err := cluster.TCPNetwork{Logger: &log}.Client("sparkSubmit", conf)
	if err != nil {
		return err
	}
	defer cli.ShutdownEnv(env)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := rmclient.New(env, master.Address)
	out := cmd.OutOrStdout()
	if f.kill != "" {
		fmt.Fprintf(out, "Killing application %s\n", appID)
		killed, err := client.Kill(ctx, appID, "")
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("cannot kill %s: %w", appID, err)}
		}
		r, err := client.Report(ctx, appID)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: err}
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
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("cannot get the status of %s: %w", appID, err)}
	}
	fmt.Fprintf(out, "Application report for %s (state: %s)\n%s\n", appID, r.State, r)
	if r.TasksTotal > 0 {
		fmt.Fprintf(out, "\t tasks: %d done, %d running, of %d\n", r.TasksDone, r.TasksRunning, r.TasksTotal)
	}
	return nil
}
