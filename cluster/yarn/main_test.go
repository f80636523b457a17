package yarn

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"go.uber.org/goleak"
)

// The sparkrpc binary, built once for the tests that run it as the user's
// program (sparkrpcBinary); binDir is removed when the tests end.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// TestMain fails the package when a goroutine is still running after every
// test and example has finished, and removes the sparkrpc binary the tests
// built.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
		os.Exit(code)
	}))
}

// sparkrpcBinary returns the path of the sparkrpc command (./cmd/sparkrpc,
// with its built-in applications), built on first use.
func sparkrpcBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "sparkrpc-yarn-test-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "sparkrpc")
		buildErr = testutil.GoBuild("github.com/sparkrpc/sparkrpc/cmd/sparkrpc", binPath)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}
