package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The raw TCP ceiling: the same messages, in the same protobuf wire format,
// written as 4-byte big-endian length-prefixed frames over one loopback TCP
// connection with buffered reads and writes. No envelope, no routing, no
// actors, no reflection: messages are encoded and decoded by hand with
// protowire, and the receiver reads the sender and sequence number in place
// without copying the payload. What is left is the cost of the kernel and of
// the harness, which bounds what any transport over TCP can reach.

const maxTCPFrame = 64 << 20

// frameWriter writes length-prefixed frames.
type frameWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newFrameWriter(conn net.Conn) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(conn, 64<<10), buf: make([]byte, 0, 256)}
}

// writePing writes m as a frame, in BenchPing's wire format.
func (fw *frameWriter) writePing(m *messages.BenchPing) error {
	b := append(fw.buf[:0], 0, 0, 0, 0)
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
	b := append(fw.buf[:0], 0, 0, 0, 0)
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
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(fr.hdr[:])
	if n > maxTCPFrame {
		return nil, fmt.Errorf("frame of %d bytes is too large", n)
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	b := fr.buf[:n]
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return nil, err
	}
	return b, nil
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

// tcpPair is a loopback connection: client is the dialled side, server the
// accepted side.
type tcpPair struct {
	ln             net.Listener
	client, server net.Conn
}

func newTCPPair(ctx context.Context) (*tcpPair, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	accepted := make(chan net.Conn, 1)
	acceptErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			acceptErr <- err
			return
		}
		accepted <- c
	}()
	var d net.Dialer
	client, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	select {
	case server := <-accepted:
		return &tcpPair{ln: ln, client: client, server: server}, nil
	case err := <-acceptErr:
		client.Close()
		ln.Close()
		return nil, err
	case <-ctx.Done():
		client.Close()
		ln.Close()
		return nil, ctx.Err()
	}
}

func (p *tcpPair) close() {
	p.client.Close()
	p.server.Close()
	p.ln.Close()
}

// tcpOneway streams the one-way workload of p over one connection.
func tcpOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	pair, err := newTCPPair(ctx)
	if err != nil {
		return nil, err
	}
	sk := &sink{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fr := newFrameReader(pair.server)
		var m messages.BenchPing
		for {
			b, err := fr.read()
			if err != nil {
				return
			}
			if m.Sender, m.Seq, err = decodeIDs(b); err != nil {
				return
			}
			sk.arrive(0, &m)
		}
	}()
	defer func() {
		pair.close()
		wg.Wait()
	}()
	fw := newFrameWriter(pair.client)
	send := func(_ int, m *messages.BenchPing) error { return fw.writePing(m) }
	flush := func(int) error { return fw.w.Flush() }
	return h.measure(ctx, p.Payload, onewayRunner(h, p, sk, 1, 1, send, flush))
}

// tcpAsk runs the asking workload of p over one connection, multiplexed:
// the askers queue requests to one writer goroutine that writes whatever is
// queued and then flushes; the server answers in order and flushes when it
// has no more requests buffered; one reader goroutine hands each reply to its
// asker.
func tcpAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	pair, err := newTCPPair(ctx)
	if err != nil {
		return nil, err
	}
	sk := &sink{}
	workers := max(1, p.InFlight)
	replies := make([]chan *messages.BenchPong, workers)
	for i := range replies {
		replies[i] = make(chan *messages.BenchPong, 1)
	}
	requests := make(chan *messages.BenchPing, workers)
	closed := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // server
		defer wg.Done()
		fr := newFrameReader(pair.server)
		fw := newFrameWriter(pair.server)
		var m messages.BenchPing
		for {
			b, err := fr.read()
			if err != nil {
				return
			}
			if m.Sender, m.Seq, err = decodeIDs(b); err != nil {
				return
			}
			pong := sk.reply(&m)
			if fw.writePong(pong.Sender, pong.Seq) != nil {
				return
			}
			if fr.r.Buffered() == 0 && fw.w.Flush() != nil {
				return
			}
		}
	}()
	go func() { // client writer
		defer wg.Done()
		fw := newFrameWriter(pair.client)
		for {
			var m *messages.BenchPing
			select {
			case m = <-requests:
			case <-closed:
				return
			}
			if fw.writePing(m) != nil {
				return
			}
			for more := true; more; {
				select {
				case m = <-requests:
					if fw.writePing(m) != nil {
						return
					}
				default:
					more = false
				}
			}
			if fw.w.Flush() != nil {
				return
			}
		}
	}()
	go func() { // client reader
		defer wg.Done()
		fr := newFrameReader(pair.client)
		for {
			b, err := fr.read()
			if err != nil {
				return
			}
			sender, seq, err := decodeIDs(b)
			if err != nil {
				return
			}
			if s := int(sender); s >= 0 && s < workers {
				replies[s] <- &messages.BenchPong{Sender: sender, Seq: seq}
			}
		}
	}()
	defer func() {
		close(closed)
		pair.close()
		wg.Wait()
	}()
	stall := h.cfg.StallTimeout
	timers := make([]*time.Timer, workers)
	for i := range timers {
		timers[i] = time.NewTimer(stall)
	}
	ask := func(ctx context.Context, w int, m *messages.BenchPing) (*messages.BenchPong, error) {
		requests <- m
		timers[w].Reset(stall)
		select {
		case pong := <-replies[w]:
			return pong, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timers[w].C:
			return nil, fmt.Errorf("%w: no reply on the raw TCP connection for %v", ErrStalled, stall)
		}
	}
	return h.measure(ctx, p.Payload, askRunner(h, p, sk, ask))
}
