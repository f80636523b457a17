// The pooled buffers that outboxes encode frames into.

package netty

import (
	"math/bits"
	"sync"
	"unsafe"
)

// chunkSize is the size of the buffers an outbox encodes frames into, and
// smallChunkSize that of the first chunk of a batch: a peer that sends a
// few small messages (a registration, a heartbeat) takes 4 KiB, not 64,
// and a backlog goes on in 64 KiB chunks. A frame larger than chunkSize
// gets a chunk of its own, of the next power of two up to maxPooledChunk
// (and of its exact size above that), which later frames of its batch fill
// when they fit.
const (
	chunkSize      = 64 << 10
	smallChunkSize = 4 << 10
	maxPooledChunk = 16 << 20
	// bigChunkClasses is the number of powers of two from 2*chunkSize to
	// maxPooledChunk.
	bigChunkClasses = 8
)

// chunkPool and smallChunkPool hold the chunks of every outbox, so that an
// idle peer keeps no buffer and the garbage collector can reclaim unused
// ones; bigChunkPools[i] holds those of chunkSize<<(i+1) bytes. Without
// them every frame over 64 KiB took a new buffer, which the runtime
// zeroes: 12 % of the CPU of a stream of 64 KiB messages.
var (
	chunkPool      = sync.Pool{New: func() any { return new([chunkSize]byte) }}
	smallChunkPool = sync.Pool{New: func() any { return new([smallChunkSize]byte) }}
	bigChunkPools  [bigChunkClasses]sync.Pool
)

// bigChunkClass returns the index in bigChunkPools of the chunks that hold
// n bytes (chunkSize < n <= maxPooledChunk), and their size.
func bigChunkClass(n int) (int, int) {
	class := bits.Len(uint(n-1)) - bits.TrailingZeros(chunkSize) - 1
	return class, chunkSize << (class + 1)
}

// getChunk returns an empty chunk with room for n bytes; first says it is
// the first chunk of a batch.
func getChunk(n int, first bool) []byte {
	switch {
	case n > maxPooledChunk:
		return make([]byte, 0, n)
	case n > chunkSize:
		class, size := bigChunkClass(n)
		if p, ok := bigChunkPools[class].Get().(*byte); ok {
			return unsafe.Slice(p, size)[:0]
		}
		return make([]byte, 0, size)
	case first && n <= smallChunkSize:
		return smallChunkPool.Get().(*[smallChunkSize]byte)[:0]
	default:
		return chunkPool.Get().(*[chunkSize]byte)[:0]
	}
}

// recycle returns the pooled chunks of a sent (or dropped) batch to their
// pools (recycleChunk), and clears chunks.
func recycle(chunks [][]byte) {
	for i, c := range chunks {
		recycleChunk(c)
		chunks[i] = nil
	}
}

// recycleChunk returns c to its pool, when it came from one. A big chunk is
// kept as a pointer to its first byte, which a pool holds without
// allocating, and made whole again by getChunk from its class.
func recycleChunk(c []byte) {
	switch n := cap(c); {
	case n == chunkSize:
		chunkPool.Put((*[chunkSize]byte)(c[:chunkSize]))
	case n == smallChunkSize:
		smallChunkPool.Put((*[smallChunkSize]byte)(c[:smallChunkSize]))
	case n > chunkSize && n <= maxPooledChunk && n&(n-1) == 0:
		class, _ := bigChunkClass(n)
		bigChunkPools[class].Put(unsafe.SliceData(c[:1]))
	}
}
