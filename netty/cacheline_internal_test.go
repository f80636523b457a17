package netty

import (
	"testing"
	"unsafe"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestFrameReaderOwnsItsCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	if size := unsafe.Sizeof(frameReader{}); !testutil.OwnsCacheLines(size) {
		t.Fatalf("a frameReader is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}
