// Reading past the frame reader's buffer: a stream of large frames goes
// from the socket straight into the pooled chunks they are handed on in.

package netty

import (
	"encoding/binary"
	"io"
)

// headerPast reads the next frame's length prefix from the source, past
// the empty buffer, after a large frame that readPast read: filling the
// buffer to read it would fill it with most of the next large frame's
// body, which would then be copied into its chunk. A peer that stops
// within the prefix is mid-frame for the idle checks, as it is when the
// buffer holds part of it.
func (fr *frameReader) headerPast() (uint32, error) {
	hdr := fr.hdr[:]
	got := 0
	for got < frameHeaderLen {
		n, err := fr.src.Read(hdr[got:])
		got += n
		fr.inFrame = got > 0
		if got == frameHeaderLen {
			break
		}
		if err != nil {
			if err == io.EOF && got > 0 {
				return 0, unexpected(err)
			}
			return 0, err
		}
	}
	return binary.BigEndian.Uint32(hdr), nil
}

// readPast reads a large frame's body into b: what the buffer holds of it
// is copied, and the rest is read from the source straight into b, which
// leaves the buffer empty (headerPast).
func (fr *frameReader) readPast(b []byte) error {
	n := 0
	if k := min(len(b), fr.r.Buffered()); k > 0 {
		n, _ = fr.r.Read(b[:k]) // buffered: copied, no read
	}
	if n == len(b) {
		return nil
	}
	if _, err := io.ReadFull(fr.src, b[n:]); err != nil {
		return err
	}
	fr.past = true
	return nil
}
