package actor

import (
	"testing"
	"unsafe"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestRefOwnsItsCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	if size := unsafe.Sizeof(Ref{}); !testutil.OwnsCacheLines(size) {
		t.Fatalf("a Ref is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}

func TestMsgCounterOwnsItsCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	var c msgCounter
	if size := unsafe.Sizeof(c); !testutil.OwnsCacheLines(size) {
		t.Fatalf("a msgCounter is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
	if off := unsafe.Offsetof(c.sent); off%64 != 0 {
		t.Fatalf("msgCounter.sent is at offset %d, not at the start of a cache line", off)
	}
}
