package netty_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
)

// namesBoth reports whether s names the protocol versions this package
// speaks and peer speaks.
func namesBoth(s string, peer uint32) bool {
	has := func(v uint32) bool { return regexp.MustCompile(fmt.Sprintf(`\b%d\b`, v)).MatchString(s) }
	return strings.Contains(s, "version") && has(netty.ProtocolVersion) && has(peer)
}

// A dialer of an older protocol version is refused with a reason that
// names both versions: the reason is all that a peer of another version
// (whose code cannot change) shows its user, and "unsupported protocol
// version 6" does not say which version it should run. The acceptor's own
// log line names both versions too. Before, both named the dialer's
// version only.
func TestOlderDialerIsToldBothVersions(t *testing.T) {
	var logs syncBuffer
	tr := netty.NewTransport(netty.WithLogger(zerolog.New(&logs)))
	server, err := actor.NewEnv("server", nil, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, server) })
	old := uint32(netty.ProtocolVersion - 1)
	c := dialFrom(t, server, "")
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	r := bufio.NewReader(c)
	writeMsg(t, c, &messages.Handshake{Version: old, Identity: "127.0.0.1:1"})
	var reply messages.HandshakeReply
	readMsg(t, r, &reply)
	if reply.Error == "" {
		t.Fatal("a dialer of an older protocol version was not refused")
	}
	if !namesBoth(reply.Error, old) {
		t.Errorf("the refusal %q does not name both versions (%d here, %d the dialer's)", reply.Error, netty.ProtocolVersion, old)
	}
	testutil.Eventually(t, waitFor, "the refusal to be counted", func() bool { return tr.Stats().ProtocolErrors == 1 })
	if line := logs.String(); !namesBoth(line, old) {
		t.Errorf("the acceptor's log does not name both versions:\n%s", line)
	}
}

// A dialer refused by an acceptor of an older protocol version (which
// answers with its version and the reason its own code gives, naming only
// the dialer's version) fails with an ErrProtocol that names both
// versions, a *netty.VersionError, so that the operator learns which side
// to upgrade. Before, the error named this env's version only.
func TestRefusalByAnOlderAcceptorNamesBothVersions(t *testing.T) {
	client, _ := clientWithTransport(t)
	peer := newFakePeer(t)
	old := uint32(netty.ProtocolVersion - 1)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_, err := client.SetupEndpointRef(ctx, peer.addr(), "anything")
		done <- err
	}()
	peer.ln.(interface{ SetDeadline(time.Time) error }).SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	c, err := peer.ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(waitFor)) //nolint:errcheck
	r := bufio.NewReader(c)
	var hello messages.Handshake
	readMsg(t, r, &hello)
	// What an acceptor of the previous version answers.
	writeMsg(t, c, &messages.HandshakeReply{Version: old, Identity: peer.ln.Addr().String(),
		Error: fmt.Sprintf("unsupported protocol version %d", hello.Version)})
	err = <-done
	if err == nil {
		t.Fatal("the lookup succeeded")
	}
	if !errors.Is(err, netty.ErrProtocol) {
		t.Errorf("err %v: want ErrProtocol", err)
	}
	var ve *netty.VersionError
	if !errors.As(err, &ve) || ve.Peer != old || ve.Local != netty.ProtocolVersion {
		t.Errorf("err %v: want a *netty.VersionError with Peer %d, Local %d", err, old, netty.ProtocolVersion)
	}
	if !namesBoth(err.Error(), old) {
		t.Errorf("err %q does not name both versions (%d here, %d the peer's)", err, netty.ProtocolVersion, old)
	}
}
