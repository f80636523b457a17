// The buffers encoded frames wait in: a peer's outbox and its credit
// queues.

package netty

import "encoding/binary"

// outbuf holds encoded frames in chunks, so that a growing backlog is never
// copied; the writer sends a batch of them (writeChunks) and gives the
// chunks back for reuse.
type outbuf struct {
	chunks [][]byte
	size   int // bytes in chunks
	frames int // frames in chunks
	// ctl is the bytes of control frames in chunks (an outbox's,
	// queueControl): outside the outbox's bound, and bounded by
	// maxControlQueued instead.
	ctl int32
	// small says every chunk is a small one (as the first of a batch is):
	// a credit queue's, whose chunks move to the outbox whole (credit.go).
	small bool
}

func (o *outbuf) empty() bool { return len(o.chunks) == 0 }

// tail returns the chunk to append n bytes to, making it the last chunk.
func (o *outbuf) tail(n int) []byte {
	if k := len(o.chunks); k > 0 {
		if last := o.chunks[k-1]; cap(last)-len(last) >= n {
			return last
		}
	}
	c := getChunk(n, o.small || len(o.chunks) == 0)
	o.chunks = append(o.chunks, c)
	return c
}

// setTail stores the chunk that tail returned after appending to it.
func (o *outbuf) setTail(c []byte) {
	k := len(o.chunks) - 1
	o.size += len(c) - len(o.chunks[k])
	o.chunks[k] = c
}

// prepend puts chunk, which holds frames frames, ahead of every chunk.
func (o *outbuf) prepend(chunk []byte, frames int) {
	o.chunks = append(o.chunks, nil)
	copy(o.chunks[1:], o.chunks)
	o.chunks[0] = chunk
	o.size += len(chunk)
	o.frames += frames
}

// dropEmptyTail removes the last chunk when nothing was written to it.
func (o *outbuf) dropEmptyTail() {
	if k := len(o.chunks); k > 0 && len(o.chunks[k-1]) == 0 {
		recycle(o.chunks[k-1:])
		o.chunks = o.chunks[:k-1]
	}
}

// take removes and returns every chunk; spare is reused as the new list.
func (o *outbuf) take(spare [][]byte) [][]byte {
	c := o.chunks
	o.chunks = spare[:0]
	o.size, o.frames, o.ctl = 0, 0, 0
	return c
}

// reset drops every queued frame.
func (o *outbuf) reset() {
	recycle(o.chunks)
	o.chunks = o.chunks[:0]
	o.size, o.frames, o.ctl = 0, 0, 0
}

// forEachFrame calls fn with the body of every frame in chunks after the
// first skip bytes; a frame that skip cuts in two counts as not skipped. A
// frame never spans two chunks (tail gives each frame room in one).
func forEachFrame(chunks [][]byte, skip int64, fn func(body []byte)) {
	for _, c := range chunks {
		for off := 0; off+frameHeaderLen <= len(c); {
			end := off + frameHeaderLen + int(binary.BigEndian.Uint32(c[off:]))
			if end > len(c) {
				break // cannot happen: frames are whole
			}
			if skip < int64(end-off) {
				fn(c[off+frameHeaderLen : end])
			}
			skip = max(0, skip-int64(end-off))
			off = end
		}
	}
}
