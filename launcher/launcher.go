package launcher

// This file holds Run and Command, the program's command line, and their
// options.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

// Option configures the program Run and Command build.
type Option func(*program)

// WithName sets the program's name, which its usage lines and version
// line show (default: the base name of os.Args[0]).
func WithName(name string) Option { return func(p *program) { p.name = name } }

// WithVersion sets the version the program reports, in place of its main
// module's version (for example one set at link time with -ldflags -X).
func WithVersion(v string) Option { return func(p *program) { p.version = v } }

// WithCommands adds commands of the program's own to the ones every
// sparkrpc program has (the sparkrpc command adds its daemons and bench).
// A command named as one of those (submit, applicationmaster, executor,
// driver, version) is a programming mistake: Command and Run panic.
func WithCommands(cmds ...*cobra.Command) Option {
	return func(p *program) { p.extra = append(p.extra, cmds...) }
}

// WithInstalledOnCluster says that the program is installed on the
// cluster's nodes, and is what their node managers run, as the sparkrpc
// command is: the primary resource spark-internal then ships nothing, and
// containers run the nodes' copy (Spark's spark-internal). Without it,
// spark-internal on a master that starts containers ships this program, so
// that they run the applications compiled into it.
func WithInstalledOnCluster() Option { return func(p *program) { p.installed = true } }

// WithOutput sets where the program writes (default os.Stdout and
// os.Stderr).
func WithOutput(stdout, stderr io.Writer) Option {
	return func(p *program) { p.stdout, p.stderr = stdout, stderr }
}

// program is what the options configure.
type program struct {
	name, version  string
	extra          []*cobra.Command
	stdout, stderr io.Writer
	installed      bool // WithInstalledOnCluster
}

// newProgram applies opts over the defaults.
func newProgram(opts []Option) *program {
	p := &program{name: filepath.Base(os.Args[0]), stdout: os.Stdout, stderr: os.Stderr}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Run runs the program's command line args (os.Args[1:]) and returns its
// exit code: 0 on success, 1 for a usage mistake (after printing the usage
// line) and for most failures, or the code a failed application or
// container chose. A main hands over to it once its applications are
// registered:
//
//	func main() { os.Exit(launcher.Run(os.Args[1:])) }
//
// Run is the process's main: it owns the command line, handles SIGINT and
// SIGTERM while a command runs, passes its log settings on to the
// processes it starts through their environment, and keeps from them the
// file descriptors the process inherited (3 and up: they become
// close-on-exec), so that no container gets what a shell left open.
func Run(args []string, opts ...Option) int {
	cli.CloseInheritedOnExec()
	p := newProgram(opts)
	root := p.command()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintf(p.stderr, "%s: %s\n", p.name, cli.UserMessage(err))
	}
	var ue *cli.UsageError
	if errors.As(err, &ue) || cli.IsCobraUsageError(err) {
		fmt.Fprintf(p.stderr, "usage: %s\n", cmd.UseLine())
		fmt.Fprintf(p.stderr, "Run '%s --help' for more.\n", cmd.CommandPath())
		return 1
	}
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// Command returns the program's root command, with the subcommands every
// sparkrpc program has: submit, and the roles a cluster starts it in
// (applicationmaster, executor, driver), and version. Run executes it.
func Command(opts ...Option) *cobra.Command {
	return newProgram(opts).command()
}

// command builds the root command.
func (p *program) command() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:           p.name,
		Short:         "A sparkrpc program: submit its applications, and the roles a cluster starts it in",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				fmt.Fprintln(cmd.OutOrStdout(), p.versionString())
				return nil
			}
			return cmd.Help()
		},
	}
	root.SetOut(p.stdout)
	root.SetErr(p.stderr)
	root.Flags().BoolVar(&showVersion, "version", false, "print the version and exit")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cli.UsageError{Err: err}
	})
	cli.AddLogFlags(root)
	cmds := []*cobra.Command{p.newSubmitCmd(), newApplicationMasterCmd(), newExecutorCmd(), newDriverCmd(), p.newVersionCmd()}
	own := map[string]bool{}
	for _, c := range cmds {
		own[c.Name()] = true
	}
	for _, c := range p.extra {
		if own[c.Name()] {
			// A programming mistake, as a flag defined twice is.
			panic(fmt.Sprintf("launcher: WithCommands: %q is a command every sparkrpc program has", c.Name()))
		}
	}
	for _, c := range append(cmds, p.extra...) {
		c.SetFlagErrorFunc(root.FlagErrorFunc())
		root.AddCommand(c)
	}
	return root
}
