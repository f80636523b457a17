package testutil_test

import (
	"runtime"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

var sink []byte

func TestAllocatedBytesCountsWhatFnAllocates(t *testing.T) {
	const size = 1 << 20
	n := testutil.AllocatedBytes(func() { sink = make([]byte, size) })
	sink = nil
	if n < size {
		t.Fatalf("AllocatedBytes = %d, want at least %d", n, size)
	}
}

func TestLiveHeapSeesWhatIsKept(t *testing.T) {
	const size = 8 << 20
	before := testutil.LiveHeap()
	kept := make([]byte, size)
	grew := testutil.LiveHeap() - before
	if grew < size/2 {
		t.Fatalf("live heap grew by %d bytes while %d were kept", grew, size)
	}
	runtime.KeepAlive(kept)
}
