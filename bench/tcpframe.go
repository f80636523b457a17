package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sparkrpc/sparkrpc/messages"
)

// This file holds what every raw TCP baseline shares: 4-byte big-endian
// length-prefixed frames with buffered reads and writes, messages encoded
// and decoded by hand with protowire (read in place, nothing copied), and
// loopback connections to one listener.

const maxTCPFrame = 64 << 20

// frameWriter writes length-prefixed frames.
type frameWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newFrameWriter(conn net.Conn) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(conn, 64<<10), buf: make([]byte, 0, 256)}
}

// begin returns the frame buffer, emptied, with room for the length prefix.
func (fw *frameWriter) begin() []byte { return append(fw.buf[:0], 0, 0, 0, 0) }

// writePing writes m as a frame, in BenchPing's wire format.
func (fw *frameWriter) writePing(m *messages.BenchPing) error {
	b := fw.begin()
	if m.Sender != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(m.Sender))
	}
	if m.Seq != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, m.Seq)
	}
	if len(m.Payload) > 0 {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, m.Payload)
	}
	return fw.flushFrame(b)
}

// writePong writes a BenchPong frame.
func (fw *frameWriter) writePong(sender int32, seq uint64) error {
	b := fw.begin()
	if sender != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(sender))
	}
	if seq != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, seq)
	}
	return fw.flushFrame(b)
}

// flushFrame sets the length prefix of the frame b that begin started and
// hands it to the buffered writer.
func (fw *frameWriter) flushFrame(b []byte) error {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	fw.buf = b
	_, err := fw.w.Write(b)
	return err
}

// frameReader reads length-prefixed frames.
type frameReader struct {
	r   *bufio.Reader
	hdr [4]byte
	buf []byte
}

func newFrameReader(conn net.Conn) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(conn, 64<<10)}
}

// read returns the next frame's body, valid until the next read.
func (fr *frameReader) read() ([]byte, error) {
	n, err := fr.readHeader()
	if err != nil {
		return nil, err
	}
	return fr.body(n)
}

// body reads the body of n bytes of the frame whose header readHeader
// read into the reader's own buffer; it is valid until the next read.
func (fr *frameReader) body(n int) ([]byte, error) {
	b, err := fr.readBody(n, fr.buf)
	if err != nil {
		return nil, err
	}
	fr.buf = b
	return b, nil
}

// readHeader reads the next frame's length prefix.
func (fr *frameReader) readHeader() (int, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return 0, err
	}
	n := binary.BigEndian.Uint32(fr.hdr[:])
	if n > maxTCPFrame {
		return 0, fmt.Errorf("frame of %d bytes is too large", n)
	}
	return int(n), nil
}

// readBody reads the body of n bytes of the frame whose header readHeader
// read into buf, grown if it is too small, and returns it.
func (fr *frameReader) readBody(n int, buf []byte) ([]byte, error) {
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	b := buf[:n]
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readIDs reads the next frame, a BenchPing or BenchPong, and returns its
// sender and sequence number.
func (fr *frameReader) readIDs() (sender int32, seq uint64, err error) {
	b, err := fr.read()
	if err != nil {
		return 0, 0, err
	}
	return decodeIDs(b)
}

// decodeIDs reads fields 1 (sender) and 2 (seq) of a BenchPing or BenchPong
// in place, skipping the rest.
func decodeIDs(b []byte) (sender int32, seq uint64, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, protowire.ParseError(n)
			}
			sender, b = int32(v), b[n:]
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, protowire.ParseError(n)
			}
			seq, b = v, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, 0, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return sender, seq, nil
}

// readArrivals reads BenchPing frames from conn and records each at
// receiver r of sk, until the connection fails or closes.
func readArrivals(conn net.Conn, sk *sink, r int) {
	fr := newFrameReader(conn)
	var m messages.BenchPing
	for {
		var err error
		if m.Sender, m.Seq, err = fr.readIDs(); err != nil {
			return
		}
		sk.arrive(r, &m)
	}
}

// writeQueued writes the messages queued on queue to fw, in their order,
// flushing whenever the queue is empty, until closed is closed or a write
// fails.
func writeQueued(fw *frameWriter, queue <-chan *messages.BenchPing, closed <-chan struct{}) {
	for {
		var m *messages.BenchPing
		select {
		case m = <-queue:
		case <-closed:
			return
		}
		for m != nil {
			if fw.writePing(m) != nil {
				return
			}
			select {
			case m = <-queue:
			default:
				m = nil
			}
		}
		if fw.w.Flush() != nil {
			return
		}
	}
}

// tcpConns are loopback connections to one listener: clients[i] is the
// dialled side of a connection, servers[i] its accepted side. Over TLS they
// are *tls.Conn whose handshake is complete.
type tcpConns struct {
	ln      net.Listener
	clients []net.Conn
	servers []net.Conn
	raw     []net.Conn // the TCP connections, both sides
}

// newTCPConns opens n loopback connections, over TLS when sec is not nil.
func newTCPConns(ctx context.Context, sec *tlsSetup, n int) (*tcpConns, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &tcpConns{ln: ln}
	for range n {
		var d net.Dialer
		client, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			c.close()
			return nil, err
		}
		c.raw = append(c.raw, client)
		// The dial succeeded: the connection waits in the backlog.
		server, err := ln.Accept()
		if err != nil {
			c.close()
			return nil, err
		}
		c.raw = append(c.raw, server)
		if sec != nil {
			tc, ts, err := sec.handshake(ctx, client, server)
			if err != nil {
				c.close()
				return nil, fmt.Errorf("TLS handshake: %w", err)
			}
			client, server = tc, ts
		}
		c.clients = append(c.clients, client)
		c.servers = append(c.servers, server)
	}
	return c, nil
}

// close closes every connection and the listener; the goroutines reading
// them see their reads fail and return. Over TLS it closes the TCP
// connections underneath, without a close_notify that a peer no longer
// reading could hold up.
func (c *tcpConns) close() {
	for _, nc := range c.raw {
		nc.Close()
	}
	c.ln.Close()
}
