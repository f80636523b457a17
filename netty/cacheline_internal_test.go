package netty

import (
	"testing"
	"unsafe"
)

// ownsCacheLines reports whether a heap object of size bytes has its
// 64-byte cache lines to itself on a 64-bit platform: up to 512 bytes an
// object carries no allocation header, and in a size class that is a
// multiple of 64 bytes every object starts on a line of its own, as spans
// start on page boundaries. The paddings are sized for 64-bit platforms
// (8-byte pointers); skipOn32Bit skips the checks elsewhere.
func ownsCacheLines(size uintptr) bool { return size%64 == 0 && size <= 512 }

func skipOn32Bit(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the paddings are sized for 64-bit platforms")
	}
}

func TestFrameReaderOwnsItsCacheLines(t *testing.T) {
	skipOn32Bit(t)
	if size := unsafe.Sizeof(frameReader{}); !ownsCacheLines(size) {
		t.Fatalf("a frameReader is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}
