package netty_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
)

// A peer that sends one-way frames the server cannot decode (a type it
// does not link, here) does not get a warning logged for every frame: a
// peer (any peer on the network, with authentication off) could otherwise
// turn each of its frames of a few bytes into a log line. The transport
// rate-limits every other line a peer's input causes (refusals, failed
// authentications, bad connections, forged replies). Before, each of the
// 1,000 frames logged a warning.
func TestUndecodableFramesDoNotFloodTheLog(t *testing.T) {
	var logs syncBuffer
	tr := netty.NewTransport(netty.WithLogger(zerolog.New(&logs)))
	server, err := actor.NewEnv("server", nil, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, server) })
	register(t, server, "echo", newEcho())
	c, r := rawClient(t, server, "client-noisy")
	const n = 1000
	var batch bytes.Buffer
	env := &messages.WireEnvelope{Target: "echo", Type: "no.such.Type", Payload: []byte{8, 1}}
	b, _ := proto.Marshal(env)
	for range n {
		batch.Write(frame(t, env)) // the length prefix
		batch.Write(b)
	}
	if _, err := c.Write(batch.Bytes()); err != nil {
		t.Fatal(err)
	}
	barrier(t, c, r) // the reader has handled every frame
	if got := tr.Stats().Undecodable; got != n {
		t.Errorf("Stats.Undecodable = %d, want %d", got, n)
	}
	if got := strings.Count(logs.String(), "cannot decode message"); got > 1 {
		t.Fatalf("%d frames the server cannot decode logged %d warnings, want at most 1", n, got)
	}
}

// Peers that complete the handshake and then break the protocol (one
// garbage frame each) do not get a warning logged per connection: before
// the handshake such connections are logged at most every 10 seconds
// ("a flood of bad sockets must not flood the log"), and with
// authentication off anyone can complete one, as a new client identity
// each time. Before, each connection logged a warning.
func TestProtocolErrorsAfterTheHandshakeDoNotFloodTheLog(t *testing.T) {
	var logs syncBuffer
	tr := netty.NewTransport(netty.WithLogger(zerolog.New(&logs)))
	server, err := actor.NewEnv("server", nil, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, server) })
	const n = 50
	for i := range n {
		c, _ := rawClient(t, server, fmt.Sprintf("client-garbage-%d", i))
		if _, err := c.Write([]byte{0, 0, 0, 2, 0xff, 0xff}); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
	}
	testutil.Eventually(t, waitFor, "the protocol errors to be counted", func() bool { return tr.Stats().ProtocolErrors == n })
	if got := strings.Count(logs.String(), `"level":"warn"`); got > 1 {
		t.Fatalf("%d connections that broke the protocol after the handshake logged %d warnings, want at most 1:\n%s", n, got, logs.String())
	}
}
