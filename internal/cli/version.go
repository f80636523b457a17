package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// sparkrpcModule is the path of sparkrpc's module.
const sparkrpcModule = "github.com/sparkrpc/sparkrpc"

// FormatVersion renders the version line of the program name from the
// build information (nil when the binary has none): "NAME VERSION
// (revision REV[, modified], TIME) GOVERSION OS/ARCH". override, when set,
// replaces the main module's version. A program whose main module is not
// sparkrpc's names the sparkrpc it was built with after its own version.
func FormatVersion(name string, info *debug.BuildInfo, override, goVersion, platform string) string {
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
	fmt.Fprintf(&b, "%s %s", name, v)
	if info != nil && info.Main.Path != sparkrpcModule {
		for _, d := range info.Deps {
			if d.Path == sparkrpcModule {
				fmt.Fprintf(&b, " (sparkrpc %s)", d.Version)
			}
		}
	}
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
