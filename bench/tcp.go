package bench

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The raw TCP ceiling: the same messages, in the same protobuf wire format,
// written as 4-byte big-endian length-prefixed frames over one loopback TCP
// connection with buffered reads and writes. No envelope, no routing, no
// actors, no reflection: messages are encoded and decoded by hand with
// protowire, and the receiver reads the sender and sequence number in place
// without copying the payload. What is left is the cost of the kernel and of
// the harness, which bounds what any transport over TCP can reach.

// tcpOneway streams the one-way workload of p over one connection.
func tcpOneway(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return tcpOnewayWith(ctx, h, p, readArrivals)
}

// tcpOnewayWith streams the one-way workload of p over one connection
// whose accepted side read reads.
func tcpOnewayWith(ctx context.Context, h *harness, p Params, read func(net.Conn, *sink, int)) (*Figures, error) {
	conns, err := newTCPConns(ctx, h.connTLS, 1)
	if err != nil {
		return nil, err
	}
	sk := &sink{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		read(conns.servers[0], sk, 0)
	}()
	defer func() {
		conns.close()
		wg.Wait()
	}()
	fw := newFrameWriter(conns.clients[0])
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
	return tcpAskWith(ctx, h, p, serveInline)
}

// serveInline answers the BenchPing requests read from conn on the reading
// goroutine, flushing when no more requests are buffered, until the
// connection fails or closes.
func serveInline(conn net.Conn, sk *sink) {
	fr := newFrameReader(conn)
	fw := newFrameWriter(conn)
	var m messages.BenchPing
	for {
		var err error
		if m.Sender, m.Seq, err = fr.readIDs(); err != nil {
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
}

// tcpAskWith runs the asking workload of p over one connection whose
// accepted side serve answers.
func tcpAskWith(ctx context.Context, h *harness, p Params, serve func(net.Conn, *sink)) (*Figures, error) {
	conns, err := newTCPConns(ctx, h.connTLS, 1)
	if err != nil {
		return nil, err
	}
	server, client := conns.servers[0], conns.clients[0]
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
		serve(server, sk)
	}()
	go func() { // client writer
		defer wg.Done()
		writeQueued(newFrameWriter(client), requests, closed)
	}()
	go func() { // client reader
		defer wg.Done()
		fr := newFrameReader(client)
		for {
			sender, seq, err := fr.readIDs()
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
		conns.close()
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
