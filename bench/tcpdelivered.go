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
// owns, and handed to a goroutine other than the connection's reader, as an
// endpoint's handler never runs on the reader. No envelope, no routing, no
// flow control: for small messages, what is left between this and sparkrpc
// is the transport itself. For large ones it is no bound: its one reader
// reads a frame and copies it into the new message before it reads on.

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
// message and hands it through a handoff to a goroutine that calls handle,
// and batchDone (when not nil) after each batch, until the connection
// fails or closes; it returns once that goroutine has handled the rest.
func deliverFrames(conn net.Conn, handle func(*messages.BenchPing), batchDone func() error) {
	q := newHandoff[*messages.BenchPing]()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.drain(handle, batchDone)
	}()
	defer func() {
		q.close()
		wg.Wait()
	}()
	fr := newFrameReader(conn)
	for {
		b, err := fr.read()
		if err != nil {
			return
		}
		m := new(messages.BenchPing)
		if err := m.UnmarshalVT(b); err != nil {
			return
		}
		q.put(m)
	}
}
