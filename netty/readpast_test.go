package netty

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unsafe"

	"github.com/sparkrpc/sparkrpc/messages"
)

// readLog is a source that records where each read was asked to write,
// giving at most max bytes a read (all it has when max is 0).
type readLog struct {
	r    io.Reader
	max  int
	into []*byte
}

func (l *readLog) Read(p []byte) (int, error) {
	if l.max > 0 && len(p) > l.max {
		p = p[:l.max]
	}
	if len(p) > 0 {
		l.into = append(l.into, unsafe.SliceData(p))
	}
	return l.r.Read(p)
}

// readStraightInto reports whether a read of l wrote from the start of b.
func (l *readLog) readStraightInto(b []byte) bool {
	for _, p := range l.into {
		if p == unsafe.SliceData(b) {
			return true
		}
	}
	return false
}

// largeFrameStream is a stream of frames of the given payload sizes.
func largeFrameStream(t *testing.T, sizes ...int) (stream []byte, bodies [][]byte) {
	t.Helper()
	for i, n := range sizes {
		start := len(stream)
		var err error
		stream, err = appendFrame(stream, &messages.WireEnvelope{Target: "t", Type: "x", Payload: bytes.Repeat([]byte{byte(i + 1)}, n)})
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, stream[start+frameHeaderLen:])
	}
	return stream, bodies
}

// establishedReader is an established frame reader of src, as a connection
// has after its handshake.
func establishedReader(src io.Reader) *frameReader {
	fr := newFrameReader(src, readBufferSize)
	fr.establish(src)
	fr.max = largeFrame
	return fr
}

// A large frame after another is read from the socket straight into its
// chunk, not into the reader's buffer and then copied: once a large frame
// has left the buffer empty, the next header is read on its own. Frames of
// every size keep their bytes and order around such reads, however the
// source splits the stream.
func TestLargeFramesAreReadStraightIntoTheirChunks(t *testing.T) {
	const large, small = 100 << 10, 100
	sizes := []int{large, large, large, small, large, large, small, small, large}
	stream, bodies := largeFrameStream(t, sizes...)
	for _, max := range []int{0, 3, 1000, 70 << 10} {
		src := &readLog{r: bytes.NewReader(stream), max: max}
		fr := establishedReader(src)
		for i, want := range bodies {
			got, err := fr.next()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("reads of at most %d bytes: frame %d: %d bytes, %v", max, i, len(got), err)
			}
			if i > 0 && sizes[i-1] == large && sizes[i] == large && max == 0 && !src.readStraightInto(got) {
				t.Errorf("frame %d, of %d bytes after a large one, was not read straight into its chunk", i, len(got))
			}
		}
		if _, err := fr.next(); err != io.EOF {
			t.Fatalf("reads of at most %d bytes: after the frames: %v", max, err)
		}
	}
}

// A peer that stops within the length prefix that follows a large frame
// is mid-frame for the idle checks, and a stream that ends there is
// truncated; one that ends right after the large frame ends cleanly.
func TestAHeaderReadOnItsOwnIsPartOfItsFrame(t *testing.T) {
	stream, bodies := largeFrameStream(t, 100<<10, 100<<10)
	second := len(stream) - len(bodies[1]) - frameHeaderLen

	var fr *frameReader
	var midFrame []bool
	src := io.MultiReader(bytes.NewReader(stream[:second+2]), readerFunc(func(p []byte) (int, error) {
		midFrame = append(midFrame, fr.midFrame())
		return 0, io.EOF
	}))
	fr = establishedReader(src)
	if _, err := fr.next(); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.next(); !errors.Is(err, ErrProtocol) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a stream that ends within a header: %v", err)
	}
	if len(midFrame) == 0 || !midFrame[0] {
		t.Fatalf("mid-frame while waiting for the rest of a header: %v", midFrame)
	}

	fr = establishedReader(bytes.NewReader(stream[:second]))
	if _, err := fr.next(); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.next(); err != io.EOF {
		t.Fatalf("a stream that ends after a large frame: %v", err)
	}
}

// readerFunc is an io.Reader of a function.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
