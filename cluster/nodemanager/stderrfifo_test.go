package nodemanager_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A container that fails after replacing its stderr log with a FIFO is
// reported complete: the node manager quotes the end of stderr in the
// diagnostics only from a regular file, and does not wait in the open of a
// FIFO. Before, the open blocked for ever: the container, its process
// gone, stayed among the node's running containers, the resource manager
// kept its resources and the application never failed.
func TestAStderrFIFODoesNotHoldUpACompletion(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`rm "$LOG_DIRS/stderr" && mkfifo "$LOG_DIRS/stderr" && echo ready && exit 3`,
		cluster.Resource{MemoryMB: 256, Cores: 1})
	dir := mc.AMLogDir(h)
	fifo := filepath.Join(dir, "stderr")
	// Runs before the cluster's shutdown: a writer end releases the
	// blocked open, so that the test leaves no goroutine behind.
	t.Cleanup(func() {
		if st, err := os.Lstat(fifo); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
			if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				syscall.Close(fd)
			}
		}
	})
	testutil.Eventually(t, 10*time.Second, "the container to exit", func() bool {
		return readFile(t, filepath.Join(dir, "stdout")) == "ready\n" && len(clustertest.MarkedProcesses(mc.Marker)) == 0
	})
	testutil.EventuallyNoError(t, 10*time.Second, "the container, whose process exited with code 3, to be reported complete", func() error {
		if ids := mc.NMs[0].Containers(); len(ids) > 0 {
			r, _ := h.Poll(t.Context())
			return fmt.Errorf("the node manager still runs %v and the application is %s", ids, r.State)
		}
		return nil
	})
}
