package netty_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// An env pointed at a port that is not a sparkrpc env, one that speaks
// first (an SSH server's banner here), fails the ask at once with a
// protocol error that names the peer; it does not tell the user to raise
// spark.rpc.message.maxSize (with a limit of 4096 bytes that is not that
// key's), which is not what refused the peer's bytes and would change
// nothing. Before, every peer that is not a sparkrpc env (an SSH or HTTP
// server, or an HTTP client at an RPC port, in the acceptor's log) was
// reported as a frame over spark.rpc.message.maxSize (4096 bytes).
func TestDialNonSparkrpcPeerNamesNoMessageSizeKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")) //nolint:errcheck
			c.Close()
		}
	}()
	addr, err := actor.ParseHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client := newClientEnv(t, "client", nil)
	_, err = client.RemoteRef(addr, "echo").AskSync(testutil.Context(t, waitFor), str("x"))
	if err == nil {
		t.Fatal("ask to an SSH server succeeded")
	}
	t.Logf("error: %v", err)
	if !errors.Is(err, netty.ErrProtocol) {
		t.Errorf("error %v does not match netty.ErrProtocol", err)
	}
	if strings.Contains(err.Error(), actor.KeyMessageMaxSize) {
		t.Errorf("error names %s, which has nothing to do with it: %v", actor.KeyMessageMaxSize, err)
	}
	if !strings.Contains(err.Error(), addr.HostPort()) {
		t.Errorf("error does not name the peer %s: %v", addr.HostPort(), err)
	}
}
