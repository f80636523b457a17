package launcher

// This file holds the version command and --version.

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/spf13/cobra"
)

// newVersionCmd is `version`.
func (p *program) newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the program's version",
		Long: `Version prints the module version (v1.2.3 when installed with
'go install ...@v1.2.3'; built from a checkout, the pseudo-version Go
stamps from its commit, or (devel) without version control information,
as with -buildvcs=false), the VCS
revision the binary was built from (with "modified" when the checkout had
uncommitted changes) and its time, the Go version and the platform.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), p.versionString())
			return nil
		},
	}
}

// versionString returns the version line printed by `version`, `--version`
// and `submit --version`.
func (p *program) versionString() string {
	info, _ := debug.ReadBuildInfo()
	return cli.FormatVersion(p.name, info, p.version, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}
