package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"go.uber.org/goleak"
)

// binary is the sparkrpc binary built once for the package's tests.
var binary string

// TestMain builds the sparkrpc binary once, then runs the package's tests
// with a temporary folder of their own (TMPDIR, which the processes they
// start inherit). A passing run fails if it leaves a file in that folder,
// as it does if it leaves a goroutine behind.
func TestMain(m *testing.M) {
	// The tests of this package read log lines in the console format; the
	// processes they start inherit this default (a test that wants JSON says
	// so with --log-format json, which takes precedence).
	if os.Getenv(cli.EnvLogFormat) == "" {
		os.Setenv(cli.EnvLogFormat, cli.LogFormatConsole)
	}
	dir, err := os.MkdirTemp("", "sparkrpc-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sparkrpc")
	if err := testutil.GoBuild(".", binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	tmp, err := os.MkdirTemp("", "sparkrpc-tmp-") // short: it holds Unix sockets
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	// Containers get a clean environment: the marker that finds the
	// processes a test started must be passed on to them.
	os.Setenv(cli.EnvContainerEnvWhitelist, markerKey)
	code := m.Run()
	if code == 0 {
		if left := leftFiles(tmp); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "files left behind in the tests' temporary folder: %s\n", strings.Join(left, ", "))
			code = 1
		}
	}
	os.RemoveAll(tmp)
	os.RemoveAll(dir)
	// Fail a passing run that leaves a goroutine behind (what
	// goleak.VerifyTestMain does, after the binary's directory is gone).
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak: errors on successful test run:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leftFiles lists the entries of dir, or says why it cannot.
func leftFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}
