// A connection's writer: the batched writes of its goroutine, and the
// inline write of a lone ask or reply on a quiet connection.

package netty

import (
	"net"
	"runtime"
	"syscall"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
)

// writeLoop sends what accumulates in the peer's outbox, one write per batch.
func (c *conn) writeLoop() {
	defer c.t.wg.Done()
	p := c.p
	for {
		select {
		case <-c.sig:
		case <-c.done:
			c.dropHandoff()
			return
		}
		// Let the goroutines that are about to send run first, so that one
		// write carries more frames.
		runtime.Gosched()
		p.mu.Lock()
		if p.conn != c {
			p.mu.Unlock()
			c.dropHandoff()
			return
		}
		if batch := c.handoff; batch != nil {
			size, done := c.handoffSize, c.handoffDone
			c.handoff = nil
			p.mu.Unlock()
			if !c.finishHandoff(batch, size, done) {
				return
			}
			continue
		}
		if c.busy || c.shut || p.out.empty() {
			// A sender is writing inline (it signals when it is done and
			// more is queued), there is nothing to write, or nothing may
			// be written any more.
			p.mu.Unlock()
			c.notifyDrained()
			continue
		}
		now := c.t.now()
		c.busy = true
		c.lastFrames = p.out.frames
		size := p.out.size
		batch := p.out.take(c.spare)
		p.writing += size
		p.mu.Unlock()
		c.spare = nil
		var written int64
		err := c.extendWriteDeadline(now)
		if err == nil {
			written, err = c.writeChunks(batch)
		}
		if err != nil {
			c.writeFailed(batch, size, written, err)
			return
		}
		recycle(batch)
		c.spare = batch[:0]
		c.release(size)
	}
}

// writeChunks writes chunks, which may wait for the socket, and counts the
// bytes written: with one vectored write on plaintext TCP, else in
// coalesced writes (writeCoalesced).
func (c *conn) writeChunks(chunks [][]byte) (int64, error) {
	var written int64
	var err error
	if c.vectored {
		// WriteTo consumes (and clears) the slice it is given: give it a
		// copy so that the chunks can be recycled, in an array kept for
		// the next batch (iov itself ends empty, at the array's end).
		c.iov = append(c.iovBuf[:0], chunks...)
		c.iovBuf = c.iov[:0]
		written, err = c.iov.WriteTo(c.nc)
	} else {
		written, err = c.writeCoalesced(chunks)
	}
	c.p.sentBytes.Add(uint64(written)) //nolint:gosec // not negative
	if written > 0 {
		c.markWrote()
	}
	return written, err
}

// markWrote tells the reader's idle check that the connection wrote.
func (c *conn) markWrote() {
	if !c.wrote.Load() {
		c.wrote.Store(true)
	}
}

// defaultInlineQuiet is how long a connection must have had no write for a
// Send to write an ask or a reply itself (writeInline), when the last write
// carried one frame. A stream of asks comes faster, or in batches, so its
// frames still go out in the writer's batches; a lone ask or its reply, with
// one in flight, saves the writer's wake-up. The quiet time counts from the
// end of the last write: counted from its start, a write slower than the
// quiet time (on a machine where a system call that wakes the reader on the
// other side is dear) made the next ask or reply look quiet too, so that an
// endpoint answering a batch of asks wrote every reply with its own system
// call (docs/performance.md).
const defaultInlineQuiet = 5 * time.Microsecond

// awaited reports whether a frame from sender to target is one that
// somebody waits for: an ask (it has a sender to reply to) or a reply (its
// target is a future: a reply to a protoactor Request, addressed to an
// actor, is not). Only those are written inline. One-way messages
// keep the writer's batches: two sent moments apart, such as an executor's
// RUNNING and final update of an empty task, then usually leave in one write,
// where writing each inline costs a system call and a wake-up of the
// reader on the other side per message (on a machine where those are dear,
// nearly a fifth of an empty task's time; docs/performance.md).
func awaited(target, sender *protoactor.PID) bool {
	return sender != nil || isReply(target, sender)
}

// writeInline writes the batch of one chunk a Send has just taken, with one
// write system call that does not wait: what the socket does not take at
// once is handed to the writer, which may wait. The caller has set c.busy,
// which keeps the writer off the socket meanwhile.
func (c *conn) writeInline(batch [][]byte, size int, now time.Time) {
	if c.t.hooks.inlineWrite != nil {
		c.t.hooks.inlineWrite(c)
	}
	p := c.p
	buf := batch[0]
	c.inlineBuf = buf
	c.inlineN, c.inlineErr = 0, nil
	err := c.extendWriteDeadline(now)
	if err == nil {
		err = c.raw.Write(c.inlineWrite)
	}
	n := max(c.inlineN, 0)
	c.inlineBuf = nil
	if err == nil && c.inlineErr != nil && c.inlineErr != syscall.EAGAIN && c.inlineErr != syscall.EINTR {
		err = c.inlineErr
	}
	p.sentBytes.Add(uint64(n))
	if err != nil {
		c.writeFailed(batch, size, int64(n), err)
		return
	}
	c.markWrote()
	if n == len(buf) {
		recycle(batch)
		c.inlineSpare = batch[:0]
		c.release(size)
		return
	}
	// The socket is full: hand the write to the writer, which may wait for
	// the socket, with c.busy still set so that nothing goes out ahead of
	// the rest.
	p.mu.Lock()
	if p.conn != c || c.isClosed() {
		// The writer has left, or leaves without a look at c.handoff.
		p.mu.Unlock()
		c.writeFailed(batch, size, int64(n), net.ErrClosed)
		return
	}
	c.handoff = batch
	c.handoffSize = size
	c.handoffDone = int64(n)
	p.mu.Unlock()
	c.signal()
}

// finishHandoff writes what an inline write left of its batch of size
// bytes, done bytes of which were written; it reports whether the
// connection is still usable.
func (c *conn) finishHandoff(batch [][]byte, size int, done int64) bool {
	written, err := c.writeChunks([][]byte{batch[0][done:]})
	if err != nil {
		c.writeFailed(batch, size, done+written, err)
		return false
	}
	recycle(batch)
	c.release(size)
	return true
}

// dropHandoff reports the frames of a batch handed to the writer that the
// writer will not write: its connection closed.
func (c *conn) dropHandoff() {
	p := c.p
	p.mu.Lock()
	batch, size, done := c.handoff, c.handoffSize, c.handoffDone
	c.handoff = nil
	p.mu.Unlock()
	if batch != nil {
		c.writeFailed(batch, size, done, net.ErrClosed)
	}
}

// writeFailed closes the connection after a write of batch (size bytes)
// failed with written bytes sent, and reports the frames the socket did not
// take as the frames still queued are.
func (c *conn) writeFailed(batch [][]byte, size int, written int64, err error) {
	c.close(err)
	c.dropFrames(batch, written, err)
	recycle(batch)
	c.release(size)
}

// isClosed reports whether close has begun.
func (c *conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// signal wakes the writer, unless a wake-up is pending.
func (c *conn) signal() {
	select {
	case c.sig <- struct{}{}:
	default:
	}
}

// extendWriteDeadline makes the connection's write deadline the write
// timeout from now, give or take an eighth of it: the deadline is moved
// only once it is that much older, since moving it (a timer update in the
// runtime's poller, about 0.8 µs here) on every write was a measurable part
// of a small message's round trip. A write that takes no bytes for the
// write timeout, less at most an eighth of it, fails.
func (c *conn) extendWriteDeadline(now time.Time) error {
	timeout := c.t.writeTimeout
	if c.writeDeadline.Sub(now) > timeout-timeout/8 {
		return nil
	}
	c.writeDeadline = now.Add(timeout)
	return c.nc.SetWriteDeadline(c.writeDeadline)
}

// release gives the socket back after a write of a batch of n bytes: it
// notes when the write ended, accounts for the written bytes, wakes the
// writer for what was queued meanwhile, and tells a waiting Shutdown once
// everything queued was written.
func (c *conn) release(n int) {
	p := c.p
	end := c.t.now()
	p.mu.Lock()
	c.busy = false
	c.lastWrite = end
	p.writing -= n
	more := !p.out.empty()
	if !more && p.credit.heldB == 0 {
		p.endDrain()
	}
	p.mu.Unlock()
	if more {
		c.signal()
	}
	if c.t.hooks.released != nil {
		c.t.hooks.released(c)
	}
}

// notifyDrained tells a waiting Shutdown that everything queued was
// written, once it is.
func (c *conn) notifyDrained() {
	p := c.p
	p.mu.Lock()
	if p.out.empty() && p.credit.heldB == 0 && !c.busy {
		p.endDrain()
	}
	p.mu.Unlock()
}

// coalesceSize is the most writeCoalesced copies together into one write.
const coalesceSize = 64 << 10

// writeCoalesced writes chunks to a connection that has no vectored write,
// such as TLS, on which every write is at least one record (encrypted and
// authenticated on its own) and one system call: small chunks (a credit
// queue's are 4 KiB) are copied together into writes of up to coalesceSize
// bytes, which the TLS layer cuts into records of its largest size, and a
// chunk of half that or more is written as it is. It returns the bytes
// written, in the order of chunks.
func (c *conn) writeCoalesced(chunks [][]byte) (int64, error) {
	var written int64
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		n, err := c.nc.Write(buf)
		written += int64(n)
		buf = buf[:0]
		return err
	}
	defer func() {
		if buf != nil {
			recycleChunk(buf)
		}
	}()
	for _, ch := range chunks {
		large := len(ch) >= coalesceSize/2
		if large || len(buf)+len(ch) > coalesceSize {
			if err := flush(); err != nil {
				return written, err
			}
		}
		if large {
			n, err := c.nc.Write(ch)
			written += int64(n)
			if err != nil {
				return written, err
			}
			continue
		}
		if buf == nil {
			buf = getChunk(coalesceSize, false)
		}
		buf = append(buf, ch...)
	}
	return written, flush()
}
