package netty

import (
	"testing"
	"unsafe"
)

// ownsCacheLines reports whether a heap object of size bytes has its cache
// lines to itself: up to 512 bytes an object carries no allocation header,
// and in a size class that is a multiple of 64 bytes every object starts
// on a line of its own, as spans start on page boundaries.
func ownsCacheLines(size uintptr) bool { return size%64 == 0 && size <= 512 }

func TestFrameReaderOwnsItsCacheLines(t *testing.T) {
	if size := unsafe.Sizeof(frameReader{}); !ownsCacheLines(size) {
		t.Fatalf("a frameReader is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}
