package cli

import (
	"runtime/debug"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/sparkrpc/sparkrpc", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef"},
			{Key: "vcs.time", Value: "2026-12-02T17:51:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		info     *debug.BuildInfo
		override string
		want     string
	}{
		{info, "", "sparkrpc v1.2.3 (revision 0123456789abcdef, modified, 2026-12-02T17:51:00Z) go1.26.8 linux/amd64"},
		{info, "v9.9.9", "sparkrpc v9.9.9 (revision 0123456789abcdef, modified, 2026-12-02T17:51:00Z) go1.26.8 linux/amd64"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "sparkrpc (devel) go1.26.8 linux/amd64"},
		{nil, "", "sparkrpc (unknown) go1.26.8 linux/amd64"},
	} {
		if got := FormatVersion("sparkrpc", c.info, c.override, "go1.26.8", "linux/amd64"); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
