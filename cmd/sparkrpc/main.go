package main

import (
	"os"

	_ "github.com/sparkrpc/sparkrpc/examples" // the example applications (SparkPi, WordCount, ...)
	"github.com/sparkrpc/sparkrpc/launcher"
	"github.com/spf13/cobra"
)

// version, when set at link time (-ldflags "-X main.version=v1.2.3"),
// replaces the module version of the build information.
var version = ""

// subcommands holds the constructors of the commands only the sparkrpc
// command has; each command's file adds its own in an init function.
var subcommands []func() *cobra.Command

// options returns the launcher options of the sparkrpc command.
func options() []launcher.Option {
	cmds := make([]*cobra.Command, len(subcommands))
	for i, newCmd := range subcommands {
		cmds[i] = newCmd()
	}
	return []launcher.Option{launcher.WithName("sparkrpc"), launcher.WithVersion(version), launcher.WithInstalledOnCluster(),
		launcher.WithCommands(cmds...)}
}

// newRootCmd returns the sparkrpc command.
func newRootCmd() *cobra.Command { return launcher.Command(options()...) }

func main() {
	os.Exit(launcher.Run(os.Args[1:], options()...))
}
