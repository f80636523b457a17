package nodemanager_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A container that keeps replacing a file of its log folder with a FIFO
// (rename is atomic) does not freeze the node manager: its endpoint opens a
// log without waiting for a FIFO's writer, and refuses what is not a
// regular file. Before, readLog checked with Lstat and then opened by
// name; a swap between the two blocked the open, in the endpoint, for
// ever, and the node manager answered nothing more, container starts and
// stops included. The swap won within 36 to 1,527 reads in four runs of
// the old code; this runs 2,000.
func TestALogSwappedForAFIFODoesNotFreezeTheNodeManager(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	// The container: 64 FIFOs p0..p63 stay linked; "x" is by turns a
	// regular file and one of them.
	h := mc.SubmitShell(`cd "$LOG_DIRS" && exec perl -MPOSIX -e '
		POSIX::mkfifo("p$_", 0600) or die for 0..63; print "ready\n"; $|=1;
		for ($i = 0;; $i++) { open(F, ">r"); print F "x"; close F; rename("r", "x");
			link("p" . ($i % 64), "t"); rename("t", "x"); }'`, cluster.Resource{MemoryMB: 256, Cores: 1})
	dir := mc.AMLogDir(h)
	// Runs before the cluster's shutdown: a writer end releases a blocked
	// open, so that the node manager can stop.
	t.Cleanup(func() {
		for i := range 64 {
			if fd, err := syscall.Open(filepath.Join(dir, fmt.Sprintf("p%d", i)), syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				syscall.Close(fd)
			}
		}
	})
	testutil.Eventually(t, 10*time.Second, "the container to swap its log file", func() bool {
		return readFile(t, filepath.Join(dir, "stdout")) == "ready\n"
	})
	ref := rogueNMRef(mc, 0)
	id := filepath.Base(dir)
	for n := 1; n <= 2000; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := ref.AskSync(ctx, &messages.NmReadContainerLog{AppId: h.AppID(), ContainerId: id, Name: "x", Length: 1})
		hung := ctx.Err() != nil
		cancel()
		if !hung {
			continue
		}
		// One read hangs: does the node manager still answer anything?
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
		_, err2 := ref.AskSync(ctx, &messages.NmGetApplicationLogs{AppId: h.AppID()})
		cancel()
		t.Fatalf("read %d of log %q was not answered within 2s (%v); a listing of the application's logs asked after it: %v",
			n, "x", err, err2)
	}
}
