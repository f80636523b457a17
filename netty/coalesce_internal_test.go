package netty

import (
	"bytes"
	"errors"
	"net"
	"testing"
)

// recordingConn is a net.Conn without vectored writes (as a TLS connection
// is) that records each write, and fails once failAfter bytes are taken.
type recordingConn struct {
	net.Conn
	writes    [][]byte
	failAfter int
}

var errWriteFailed = errors.New("write failed")

func (r *recordingConn) Write(b []byte) (int, error) {
	taken := 0
	for _, w := range r.writes {
		taken += len(w)
	}
	if r.failAfter > 0 && taken+len(b) > r.failAfter {
		n := r.failAfter - taken
		r.writes = append(r.writes, bytes.Clone(b[:n]))
		return n, errWriteFailed
	}
	r.writes = append(r.writes, bytes.Clone(b))
	return len(b), nil
}

// chunksOf returns chunks of the given sizes, each filled with a byte of
// its own.
func chunksOf(sizes ...int) [][]byte {
	var chunks [][]byte
	for i, n := range sizes {
		chunks = append(chunks, bytes.Repeat([]byte{byte('a' + i)}, n))
	}
	return chunks
}

// On a connection without vectored writes, such as TLS, where every write
// is a record and a system call, a batch of small chunks goes in as few
// writes of up to coalesceSize bytes as its order allows, and a large chunk
// as it is, all in order. Before, each chunk was a write of its own: 20 of
// them for a credit queue's 20 chunks of 4 KiB.
func TestBatchWithoutVectoredWritesIsCoalesced(t *testing.T) {
	small := make([]int, 20)
	for i := range small {
		small[i] = smallChunkSize
	}
	for _, tc := range []struct {
		name   string
		sizes  []int
		writes []int // the sizes of the writes
	}{
		{"small chunks", small, []int{16 * smallChunkSize, 4 * smallChunkSize}},
		{"a large chunk between small ones", []int{100, 200, coalesceSize, 300}, []int{300, coalesceSize, 300}},
		{"a chunk over the size", []int{10, 3 * coalesceSize}, []int{10, 3 * coalesceSize}},
		{"chunks that fill writes", []int{coalesceSize/2 - 1, coalesceSize/2 - 1, 2, 5}, []int{coalesceSize, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := &recordingConn{}
			c := &conn{nc: rc, p: &peer{}}
			chunks := chunksOf(tc.sizes...)
			written, err := c.writeChunks(chunks)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, w := range rc.writes {
				sizes = append(sizes, len(w))
			}
			if len(sizes) != len(tc.writes) {
				t.Fatalf("writes of %v bytes, want %v", sizes, tc.writes)
			}
			for i := range sizes {
				if sizes[i] != tc.writes[i] {
					t.Fatalf("writes of %v bytes, want %v", sizes, tc.writes)
				}
			}
			if got, want := bytes.Join(rc.writes, nil), bytes.Join(chunks, nil); !bytes.Equal(got, want) || written != int64(len(want)) {
				t.Fatalf("wrote %d bytes (%d counted), want the %d of the chunks in order", len(got), written, len(want))
			}
			if c.p.sentBytes.Load() != uint64(written) {
				t.Fatalf("%d bytes counted as sent, want %d", c.p.sentBytes.Load(), written)
			}
		})
	}
}

// A write that fails part way reports the bytes the connection took, so
// that the frames after them are reported lost and those before are not.
func TestCoalescedWriteFailureCountsWhatWasTaken(t *testing.T) {
	rc := &recordingConn{failAfter: 5000}
	c := &conn{nc: rc, p: &peer{}}
	written, err := c.writeChunks(chunksOf(smallChunkSize, smallChunkSize, smallChunkSize))
	if !errors.Is(err, errWriteFailed) || written != 5000 {
		t.Fatalf("writeChunks = %d, %v; want 5000 and the write's error", written, err)
	}
}
