// Checks of a type's layout against cache lines.

package testutil

import (
	"testing"
	"unsafe"
)

// OwnsCacheLines reports whether a heap object of size bytes has its
// 64-byte cache lines to itself on a 64-bit platform: up to 512 bytes an
// object carries no allocation header, and in a size class that is a
// multiple of 64 bytes every object starts on a line of its own, as spans
// start on page boundaries.
func OwnsCacheLines(size uintptr) bool { return size%64 == 0 && size <= 512 }

// SkipOn32Bit skips t outside 64-bit platforms: the project's cache-line
// paddings are sized for 8-byte pointers.
func SkipOn32Bit(t testing.TB) {
	t.Helper()
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the paddings are sized for 64-bit platforms")
	}
}
