package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The head-of-line scenario: asks of 16 bytes, one in flight, to one
// endpoint of another env while a flood of one-way messages of the
// variant's payload size goes to a second endpoint of that env over the
// same connection, as many in flight as the one-way scenarios allow (the
// window). It measures how long an ask waits behind the flood: what a
// driver's heartbeat or status ask meets while blocks or results stream.
// Both the asks and the flood are verified (exactly once, in order); a
// flood that lost a message fails the measurement. The figures are the
// asks' (allocations include the flood's); Extra["flood_messages"] and
// Extra["flood_msgs_per_sec"] are the flood's.

// holAskPayload is the payload of the asks of the head-of-line scenario.
const holAskPayload = 16

// holRunner builds the run function of the head-of-line workload: the asks
// of ask, answered through askSink, and meanwhile a flood of one-way
// messages of p.Payload bytes sent with send (and flush) to floodSink.
func holRunner(h *harness, p Params, askSink, floodSink *sink, ask func(context.Context, int, *messages.BenchPing) (*messages.BenchPong, error), send func(int, *messages.BenchPing) error, flush func(int) error) runFunc {
	asks := askSpec{
		workers: 1,
		payload: make([]byte, holAskPayload),
		sink:    askSink,
		ask:     ask,
		hists:   newHistograms(1),
	}
	stop := &atomic.Bool{}
	flood := onewaySpec{
		senders:   1,
		receivers: 1,
		route:     func(int) int { return 0 },
		window:    h.cfg.window(p.Payload),
		payload:   make([]byte, p.Payload),
		sink:      floodSink,
		send:      send,
		flush:     flush,
		stop:      stop,
	}
	return func(ctx context.Context, b budget) (sample, error) {
		stop.Store(false)
		type result struct {
			s   sample
			err error
		}
		floodDone := make(chan result, 1)
		floodSink.state.Store(nil) // the previous run's state has arrivals

		// The flood runs until the asks end (its own duration only bounds
		// a run that something keeps from stopping).
		go func() {
			s, err := h.runOneway(ctx, flood, budget{duration: time.Hour})
			floodDone <- result{s, err}
		}()
		// Let the flood fill its window before the first ask.
		waitFlowing(ctx, floodSink, flood.window)
		s, askErr := h.runAsk(ctx, asks, b)
		stop.Store(true)
		fl := <-floodDone
		if err := errors.Join(askErr, fl.err); err != nil {
			return sample{}, err
		}
		if !fl.s.verified.OK {
			return sample{}, fmt.Errorf("%w: the flood: %s", ErrVerificationFailed, fl.s.verified)
		}
		s.extra = map[string]float64{"flood_messages": float64(fl.s.messages)}
		if fl.s.elapsed > 0 {
			s.extra["flood_msgs_per_sec"] = float64(fl.s.messages) / fl.s.elapsed.Seconds()
		}
		return s, nil
	}
}

// waitFlowing waits (at most a second) until the flood's first run state is
// installed and it has sent a window's worth of messages or they started
// arriving.
func waitFlowing(ctx context.Context, sk *sink, window int) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if st := sk.state.Load(); st != nil && (st.tally.sent.Load() >= int64(window) || st.tally.received.Load() > 0) {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// sparkrpcRemoteHOL asks one endpoint of another env while flooding a
// second one over the same connection.
func sparkrpcRemoteHOL(ctx context.Context, h *harness, p Params) (*Figures, error) {
	askSink, floodSink := &sink{}, &sink{}
	client, server, closeFn, err := newEnvPair(h)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	if _, err := server.RegisterEndpoint("bench", &replyEndpoint{sk: askSink}); err != nil {
		return nil, err
	}
	if _, err := server.RegisterEndpoint("flood", &sinkEndpoint{sk: floodSink}); err != nil {
		return nil, err
	}
	askRef, err := client.SetupEndpointRef(ctx, server.Address(), "bench")
	if err != nil {
		return nil, err
	}
	floodRef, err := client.SetupEndpointRef(ctx, server.Address(), "flood")
	if err != nil {
		return nil, err
	}
	send := func(_ int, m *messages.BenchPing) error { return floodRef.Send(m) }
	return h.measure(ctx, holAskPayload, holRunner(h, p, askSink, floodSink, refAsker(askRef), send, nil))
}

// protoactorRemoteHOL is the head-of-line workload over protoactor's
// remote: both actors on the second system, reached from the first.
func protoactorRemoteHOL(ctx context.Context, h *harness, p Params) (*Figures, error) {
	askSink, floodSink := &sink{}, &sink{}
	pair, target, err := newRemoteActor(h, p.Payload, protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*messages.BenchPing); ok {
			c.Respond(askSink.reply(m))
		}
	}))
	if err != nil {
		return nil, err
	}
	defer pair.close()
	if _, err := pair.b.Root.SpawnNamed(protoactor.PropsFromFunc(func(c protoactor.Context) {
		if m, ok := c.Message().(*messages.BenchPing); ok {
			floodSink.arrive(0, m)
		}
	}), "flood"); err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	flood := protoactor.NewPID(pair.b.Address(), "flood")
	send := func(_ int, m *messages.BenchPing) error {
		pair.a.Root.Send(flood, m)
		return nil
	}
	return h.measure(ctx, holAskPayload, holRunner(h, p, askSink, floodSink, protoactorAsker(pair.a, target), send, nil))
}

// holFloodTag is the sender field that marks a flood message on the raw TCP
// connection of the head-of-line workload (the asker is sender 0).
const holFloodTag = 1 << 20

// tcpHOL is the head-of-line workload over one raw TCP connection: one
// writer goroutine writes the asks and the flood in the order they were
// queued and flushes when nothing is queued; the server answers asks in
// order and flushes each answer.
func tcpHOL(ctx context.Context, h *harness, p Params) (*Figures, error) {
	conns, err := newTCPConns(ctx, h.connTLS, 1)
	if err != nil {
		return nil, err
	}
	server, client := conns.servers[0], conns.clients[0]
	askSink, floodSink := &sink{}, &sink{}
	replies := make(chan *messages.BenchPong, 1)
	// One queue for both, as a connection's outbox: the flood's window
	// bounds what it can hold.
	queue := make(chan *messages.BenchPing, h.cfg.window(p.Payload)+1)
	closed := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		serveHOL(server, askSink, floodSink)
	}()
	go func() { // client writer
		defer wg.Done()
		writeQueued(newFrameWriter(client), queue, closed)
	}()
	go func() {
		defer wg.Done()
		readPongs(client, replies)
	}()
	defer func() {
		close(closed)
		conns.close()
		wg.Wait()
	}()
	stall := h.cfg.StallTimeout
	timer := time.NewTimer(stall)
	ask := func(ctx context.Context, _ int, m *messages.BenchPing) (*messages.BenchPong, error) {
		queue <- m
		timer.Reset(stall)
		select {
		case pong := <-replies:
			return pong, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, fmt.Errorf("%w: no reply on the raw TCP connection for %v", ErrStalled, stall)
		}
	}
	send := func(_ int, m *messages.BenchPing) error {
		m.Sender = holFloodTag
		select {
		case queue <- m:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return h.measure(ctx, holAskPayload, holRunner(h, p, askSink, floodSink, ask, send, nil))
}

// serveHOL is the server side of the raw TCP head-of-line workload: it
// hands the flood's messages to floodSink and answers each ask through
// askSink, until the connection fails.
func serveHOL(conn net.Conn, askSink, floodSink *sink) {
	fr := newFrameReader(conn)
	fw := newFrameWriter(conn)
	var m messages.BenchPing
	for {
		var err error
		if m.Sender, m.Seq, err = fr.readIDs(); err != nil {
			return
		}
		if m.Sender == holFloodTag {
			m.Sender = 0
			floodSink.arrive(0, &m)
			continue
		}
		// One ask in flight: flush its reply at once (the flood
		// keeps the read buffer from ever draining).
		pong := askSink.reply(&m)
		if fw.writePong(pong.Sender, pong.Seq) != nil || fw.w.Flush() != nil {
			return
		}
	}
}

// readPongs passes the replies read from conn to replies until the
// connection fails.
func readPongs(conn net.Conn, replies chan<- *messages.BenchPong) {
	fr := newFrameReader(conn)
	for {
		sender, seq, err := fr.readIDs()
		if err != nil {
			return
		}
		replies <- &messages.BenchPong{Sender: sender, Seq: seq}
	}
}
