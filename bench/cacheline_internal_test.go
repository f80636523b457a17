package bench

import (
	"testing"
	"unsafe"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// The one-way tally's counts are on cache lines of their own (64-byte
// lines, 64-bit platforms): the tally is in a size class of whole lines,
// and received, sent and the fields read at every arrival start three
// different lines.
func TestTallyCountsOwnTheirCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	var tl tally
	if size := unsafe.Sizeof(tl); size <= 176 || size > 192 { // Go's size classes: 176, 192
		t.Fatalf("a tally is %d bytes, not in the size class of 192; adjust its padding", size)
	}
	lines := map[uintptr]string{}
	for name, off := range map[string]uintptr{
		"received": unsafe.Offsetof(tl.received),
		"sent":     unsafe.Offsetof(tl.sent),
		"target":   unsafe.Offsetof(tl.target),
	} {
		if other, ok := lines[off/64]; ok {
			t.Fatalf("%s and %s share a cache line", name, other)
		}
		lines[off/64] = name
	}
}
