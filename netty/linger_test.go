package netty_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// parked is an endpoint whose handler blocks until release is closed, so
// that what its peer floods it with stays unread in the socket.
type parked struct {
	entered chan struct{}
	release chan struct{}
}

func (p *parked) Receive(*actor.Context, proto.Message) error {
	select {
	case p.entered <- struct{}{}:
	default:
	}
	<-p.release
	return nil
}

// The frames that Shutdown flushes all reach the peer, followed by a clean
// end of stream, although bytes from that peer lie unread in the socket (a
// flood for a blocked endpoint). Closing such a socket outright resets the
// connection: the reset drops what is still on its way, and the peer, which
// reads the frames while Shutdown runs, got a reset after 1,300 to 3,001 of
// 3,001.
func TestShutdownLetsThePeerReadWhatItFlushed(t *testing.T) {
	const n = 3000
	tr := netty.NewTransport(netty.WithLogger(testLogger(t)), netty.WithClientMode())
	conf := actor.NewConf().Set(netty.KeyMaxInFlightMessages, "4")
	client, err := actor.NewEnv("client", conf, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, client) })
	ep := &parked{entered: make(chan struct{}, 1), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(ep.release) })
	defer release()
	register(t, client, "parked", ep)

	fake := newFakePeer(t)
	ref := client.RemoteRef(fake.addr(), "sink")
	if err := ref.Send(str("first")); err != nil {
		t.Fatal(err)
	}
	c, r := fake.accept()
	written, flooded := flood(t, c, 256, 96<<10)
	defer func() {
		c.Close()
		<-flooded
	}()
	select {
	case <-ep.entered:
	case <-time.After(waitFor):
		t.Fatal("the flood did not reach the endpoint")
	}
	<-written // the client's reader takes at most 68 KiB of it: the rest lies unread

	for i := range n {
		if err := ref.Send(str("queued")); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	done := make(chan error, 1)
	// The transport's own Shutdown: the env's would wait for the blocked
	// handler as well.
	go func() { done <- tr.Shutdown(context.Background()) }()
	got, err := countFrames(c, r, "sink")
	if got != n+1 || !errors.Is(err, io.EOF) {
		t.Fatalf("the peer read %d of %d frames, then %v; want all, then EOF", got, n+1, err)
	}
	c.Close()
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Shutdown did not return once the peer closed")
	}
}

// flood writes frames of 1 KiB for the endpoint "parked" to c, one write
// each, from a goroutine. written is closed once enough bytes were written
// (or the writes failed), done when the goroutine ends.
func flood(t *testing.T, c net.Conn, frames, enough int) (written, done chan struct{}) {
	t.Helper()
	payload, err := proto.Marshal(wrapperspb.Bytes(make([]byte, 1<<10)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(&messages.WireEnvelope{Target: "parked", Type: "google.protobuf.BytesValue", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	f := append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) //nolint:gosec // small
	written, done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		once := sync.OnceFunc(func() { close(written) })
		defer once()
		for i := range frames {
			if _, err := c.Write(f); err != nil {
				return
			}
			if (i+1)*len(f) >= enough {
				once()
			}
		}
	}()
	return written, done
}

// countFrames reads frames from r until an error and counts those whose
// target is target.
func countFrames(c net.Conn, r *bufio.Reader, target string) (int, error) {
	c.SetReadDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	got := 0
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return got, err
		}
		b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(r, b); err != nil {
			return got, err
		}
		var e messages.WireEnvelope
		if err := proto.Unmarshal(b, &e); err != nil {
			return got, err
		}
		if e.GetTarget() == target {
			got++
		}
	}
}
