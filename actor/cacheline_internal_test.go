package actor

import (
	"testing"
	"unsafe"
)

// ownsCacheLines reports whether a heap object of size bytes has its cache
// lines to itself: up to 512 bytes an object carries no allocation header,
// and in a size class that is a multiple of 64 bytes every object starts
// on a line of its own, as spans start on page boundaries.
func ownsCacheLines(size uintptr) bool { return size%64 == 0 && size <= 512 }

func TestRefOwnsItsCacheLines(t *testing.T) {
	if size := unsafe.Sizeof(Ref{}); !ownsCacheLines(size) {
		t.Fatalf("a Ref is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}

func TestMsgCounterOwnsItsCacheLines(t *testing.T) {
	var c msgCounter
	if size := unsafe.Sizeof(c); !ownsCacheLines(size) {
		t.Fatalf("a msgCounter is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
	if off := unsafe.Offsetof(c.sent); off%64 != 0 {
		t.Fatalf("msgCounter.sent is at offset %d, not at the start of a cache line", off)
	}
}
