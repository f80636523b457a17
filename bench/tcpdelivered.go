package bench

import (
	"context"
	"net"
	"sync"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The delivered TCP floor: the raw TCP streams of tcpOneway and tcpAsk,
// with the two things that delivering a message to an endpoint cannot do
// without. Each frame is decoded into a new message (vtprotobuf's
// generated methods, as sparkrpc's transport uses), which the receiver
// owns, and handled on a goroutine other than the connection's reader, as
// an endpoint's handler never runs on the reader. No envelope, no routing,
// no flow control: what is left between this and sparkrpc is the transport
// itself.
//
// Where the frame is decoded is the one choice left, and the floor takes
// whichever is faster: a small frame is decoded on the reader (a copy of
// a few bytes costs less than handing the frame on), a frame of
// decodeOffReader bytes or more is read into a pooled buffer and decoded by
// the handler's goroutine, so that the copy into the message's new memory
// runs while the reader reads the next frame (docs/performance.md, "The
// floor at 1 KiB and 64 KiB").

// decodeOffReader is the frame size from which the floor decodes frames on
// the handler's goroutine. Of the payloads measured, 16 bytes ran faster
// decoded on the reader and 1 KiB and 64 KiB off it.
const decodeOffReader = 512

// tcpDeliveredOneway streams the one-way workload of p over one connection
// to a reader that delivers each message as an endpoint gets it.
func tcpDeliveredOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return tcpOnewayWith(ctx, h, p, readDelivered)
}

// tcpDeliveredAsk runs the asking workload of p as tcpAsk does, with a
// server that delivers each request as an endpoint gets it: decoded into a
// new message, handed to a handler goroutine, which writes the reply and
// flushes after each batch it takes.
func tcpDeliveredAsk(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return tcpAskWith(ctx, h, p, serveDelivered)
}

// serveDelivered answers the BenchPing requests read from conn through a
// handler goroutine, until the connection fails or closes.
func serveDelivered(conn net.Conn, sk *sink) {
	fw := newFrameWriter(conn)
	deliverFrames(conn, func(m *messages.BenchPing) {
		pong := sk.reply(m)
		_ = fw.writePong(pong.Sender, pong.Seq) // a failed write fails the flush
	}, fw.w.Flush)
}

// readDelivered reads BenchPing frames from conn and hands each to a
// handler goroutine that records it at receiver r of sk, until the
// connection fails or closes.
func readDelivered(conn net.Conn, sk *sink, r int) {
	deliverFrames(conn, func(m *messages.BenchPing) { sk.arrive(r, m) }, nil)
}

// deliverFrames reads BenchPing frames from conn, decodes each into a new
// message (on the reader, or on the handler's goroutine for a frame of
// decodeOffReader bytes or more) and hands it to a goroutine that calls
// handle, and batchDone (when not nil) after each batch, until the
// connection fails or closes; it returns once that goroutine has handled
// the rest.
func deliverFrames(conn net.Conn, handle func(*messages.BenchPing), batchDone func() error) {
	q := newHandoff[delivery]()
	// The buffers of frames decoded off the reader.
	pool := sync.Pool{New: func() any { return new([]byte) }}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.drain(func(d delivery) {
			if d.frame != nil {
				d.m = new(messages.BenchPing)
				err := d.m.UnmarshalVT(*d.frame)
				pool.Put(d.frame)
				if err != nil {
					return // the receiver then misses it, and the run fails
				}
			}
			handle(d.m)
		}, batchDone)
	}()
	defer func() {
		q.close()
		wg.Wait()
	}()
	fr := newFrameReader(conn)
	for {
		n, err := fr.readHeader()
		if err != nil {
			return
		}
		if n >= decodeOffReader {
			b := pool.Get().(*[]byte)
			if *b, err = fr.readBody(n, *b); err != nil {
				return
			}
			q.put(delivery{frame: b})
			continue
		}
		b, err := fr.body(n)
		if err != nil {
			return
		}
		m := new(messages.BenchPing)
		if err := m.UnmarshalVT(b); err != nil {
			return
		}
		q.put(delivery{m: m})
	}
}

// delivery is one message for the handler: decoded, or the frame that
// holds it, in a buffer of the pool it goes back to once decoded.
type delivery struct {
	m     *messages.BenchPing
	frame *[]byte
}
