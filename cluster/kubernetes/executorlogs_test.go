package kubernetes

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// lastBytes keeps the end of a log of any length, read in small pieces.
func TestLastBytes(t *testing.T) {
	log := make([]byte, 200_000)
	for i := range log {
		log[i] = byte('a' + i%26)
	}
	for _, tc := range []struct{ size, n int }{{0, 10}, {5, 10}, {10, 10}, {200_000, 4096}, {200_000, 65536}, {100_001, 1}} {
		got, err := lastBytes(iotest.HalfReader(bytes.NewReader(log[:tc.size])), tc.n)
		want := log[max(0, tc.size-tc.n):tc.size]
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("last %d of %d bytes: %d bytes, %v", tc.n, tc.size, len(got), err)
		}
	}
	if _, err := lastBytes(iotest.ErrReader(io.ErrUnexpectedEOF), 10); err != io.ErrUnexpectedEOF {
		t.Errorf("a failing stream: %v", err)
	}
}
