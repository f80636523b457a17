// Command sparkrpc is the one binary of sparkrpc: submit applications, run
// the resource manager and node managers, run an executor, and benchmark the
// RPC layer. Run `sparkrpc --help` for the subcommands.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// usageError marks a command-line mistake; main prints the usage line and
// exits 1 for it, as spark-submit does.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitError carries an exit code chosen by a subcommand (e.g. a failed app).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// subcommands holds the constructors of the subcommands; each subcommand's
// file adds its own in an init function.
var subcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "sparkrpc",
		Short:         "Spark's RPC layer and job submission, in Go on protoactor-go",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{err: err}
	})
	addLogFlags(root)
	for _, newCmd := range subcommands {
		c := newCmd()
		c.SetFlagErrorFunc(root.FlagErrorFunc())
		root.AddCommand(c)
	}
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the command line args and returns the process exit code.
func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "sparkrpc: %s\n", userMessage(err))
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		fmt.Fprintf(os.Stderr, "usage: %s\n", cmd.UseLine())
		fmt.Fprintf(os.Stderr, "Run '%s --help' for more.\n", cmd.CommandPath())
		return 1
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
