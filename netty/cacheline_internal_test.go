package netty

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// The objects that one goroutine writes for every message or frame own
// their cache lines: an object beside them in its size class, written by
// another processor, would make each of those writes miss the cache
// (docs/performance.md, "Before and after: cache lines" and "the frame
// reader's buffered reader").

func TestFrameReaderOwnsItsCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	if size := unsafe.Sizeof(frameReader{}); !testutil.OwnsCacheLines(size) {
		t.Fatalf("a frameReader is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
	// Its buffered reader, written for every frame, is part of it rather
	// than an object of its own in another size class.
	if f, _ := reflect.TypeOf(frameReader{}).FieldByName("r"); f.Type.Kind() != reflect.Struct {
		t.Fatalf("a frameReader's buffered reader is a %s, not held in it", f.Type)
	}
}

func TestTargetCreditOwnsItsCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	if size := unsafe.Sizeof(targetCredit{}); !testutil.OwnsCacheLines(size) {
		t.Fatalf("a targetCredit is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}

func TestTargetOwnsItsCacheLines(t *testing.T) {
	testutil.SkipOn32Bit(t)
	if size := unsafe.Sizeof(target{}); !testutil.OwnsCacheLines(size) {
		t.Fatalf("a target is %d bytes: it shares cache lines with other objects; adjust its padding", size)
	}
}
