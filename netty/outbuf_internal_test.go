package netty

import "testing"

// A batch starts in a 4 KiB chunk, so that a peer that sends a few small
// messages (an executor's registration, a heartbeat) holds 4 KiB rather
// than 64; a batch that outgrows it goes on in 64 KiB chunks, and a frame
// larger than that gets a pooled chunk of the next power of two.
func TestOutbufChunkSizes(t *testing.T) {
	var o outbuf
	fill := func(n int) int {
		c := o.tail(n)
		c = append(c, make([]byte, n)...)
		o.setTail(c)
		return cap(c)
	}
	if got := fill(100); got != smallChunkSize {
		t.Fatalf("first chunk of a batch: %d bytes, want %d", got, smallChunkSize)
	}
	if got := fill(3000); got != smallChunkSize {
		t.Fatalf("a frame that fits went to a chunk of %d bytes, want the first one", got)
	}
	if got := fill(3000); got != chunkSize {
		t.Fatalf("the batch's next chunk: %d bytes, want %d", got, chunkSize)
	}
	if got := fill(chunkSize + 1); got != 2*chunkSize {
		t.Fatalf("an oversized frame's chunk: %d bytes, want %d", got, 2*chunkSize)
	}
	if len(o.chunks) != 3 || o.size != 100+3000+3000+chunkSize+1 {
		t.Fatalf("%d chunks of %d bytes", len(o.chunks), o.size)
	}
	batch := o.take(nil)
	recycle(batch)
	if got := fill(5000); got != chunkSize {
		t.Fatalf("a first frame over 4 KiB: a chunk of %d bytes, want %d", got, chunkSize)
	}
}

// Frames over 64 KiB take chunks of the next power of two up to
// maxPooledChunk, and of their own size above it; a recycled chunk keeps
// its size.
func TestBigChunkClasses(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{chunkSize + 1, 128 << 10},
		{128 << 10, 128 << 10},
		{128<<10 + 1, 256 << 10},
		{3 << 20, 4 << 20},
		{maxPooledChunk, maxPooledChunk},
		{maxPooledChunk + 1, maxPooledChunk + 1},
	} {
		got := getChunk(c.n, true)
		if len(got) != 0 || cap(got) != c.want {
			t.Errorf("getChunk(%d): len %d cap %d, want 0 and %d", c.n, len(got), cap(got), c.want)
		}
		recycle([][]byte{got[:c.n]})
		if again := getChunk(c.n, false); cap(again) != c.want {
			t.Errorf("getChunk(%d) after a recycle: cap %d, want %d", c.n, cap(again), c.want)
		}
	}
}
