//go:build !race

// sync.Pool drops items at random under the race detector, so what a pool
// holds is checked without it.

package netty

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// recycle keeps a big chunk only when its capacity is a whole class, and
// getChunk gives back that same array, whole: a buffer of any other size
// (one made for a frame over maxPooledChunk, or a slice of odd capacity)
// never enters a pool, where it would come back with a length past its end.
func TestRecycleKeepsOnlyWholeClasses(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pools
	drain := func() {
		for i := range bigChunkPools {
			for bigChunkPools[i].Get() != nil {
			}
		}
	}
	drain()
	for _, n := range []int{chunkSize + 1, 3 << 20, maxPooledChunk} {
		class, size := bigChunkClass(n)
		c := getChunk(n, false)
		recycle([][]byte{c[:n]})
		again := getChunk(n, false)
		if unsafe.SliceData(again[:1]) != unsafe.SliceData(c[:1]) || cap(again) != size || len(again) != 0 {
			t.Errorf("getChunk(%d) after recycling a chunk of class %d: a different array, or cap %d len %d, want cap %d len 0",
				n, class, cap(again), len(again), size)
		}
	}
	drain()
	recycle([][]byte{
		make([]byte, 0, 3*chunkSize),        // between classes
		make([]byte, 10, 2*chunkSize+1),     // one past a class
		make([]byte, 0, 2*maxPooledChunk),   // a power of two over the largest class
		make([]byte, 0, maxPooledChunk+100), // a frame's own buffer
	})
	for i := range bigChunkPools {
		if p := bigChunkPools[i].Get(); p != nil {
			t.Errorf("pool of class %d holds a chunk that is not of its size", i)
		}
	}
}
