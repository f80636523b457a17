package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newVersionCmd) }

// version, when set at link time (-ldflags "-X main.version=v1.2.3"),
// replaces the module version of the build information.
var version = ""

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of sparkrpc",
		Long: `Version prints the module version (v1.2.3 when installed with
'go install ...@v1.2.3', (devel) when built from a checkout), the VCS
revision the binary was built from (with "modified" when the checkout had
uncommitted changes) and its time, the Go version and the platform.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return nil
		},
	}
}

// versionString returns the version line printed by `version` and `submit --version`.
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(info, version, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// formatVersion renders the version line from the build information (nil
// when the binary has none): "sparkrpc VERSION (revision REV[, modified],
// TIME) GOVERSION OS/ARCH".
func formatVersion(info *debug.BuildInfo, override, goVersion, platform string) string {
	v := override
	var rev, modified, at string
	if info != nil {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			case "vcs.time":
				at = s.Value
			}
		}
	}
	if v == "" {
		v = "(unknown)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sparkrpc %s", v)
	if rev != "" {
		fmt.Fprintf(&b, " (revision %s", rev)
		if modified == "true" {
			b.WriteString(", modified")
		}
		if at != "" {
			fmt.Fprintf(&b, ", %s", at)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s %s", goVersion, platform)
	return b.String()
}
