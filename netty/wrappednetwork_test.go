package netty_test

import (
	"context"
	"net"
	"testing"

	"github.com/sparkrpc/sparkrpc/netty"
)

// xorNetwork is TCP through a trivial tunnel: every byte a connection writes
// is XORed with a key, and every byte it reads XORed back, as an obfuscating
// or compressing tunnel changes the bytes on the wire. Its connections embed
// the *net.TCPConn they wrap (the usual way to keep CloseWrite, SetNoDelay
// and the like), and override Read and Write.
type xorNetwork struct{}

type xorConn struct{ *net.TCPConn }

const xorKey = 0x5a

func (c xorConn) Write(b []byte) (int, error) {
	x := make([]byte, len(b))
	for i, v := range b {
		x[i] = v ^ xorKey
	}
	return c.TCPConn.Write(x)
}

func (c xorConn) Read(b []byte) (int, error) {
	n, err := c.TCPConn.Read(b)
	for i := range b[:n] {
		b[i] ^= xorKey
	}
	return n, err
}

type xorListener struct{ net.Listener }

func (l xorListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return xorConn{nc.(*net.TCPConn)}, nil
}

func (xorNetwork) Listen(network, address string) (net.Listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return xorListener{l}, nil
}

func (xorNetwork) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return xorConn{nc.(*net.TCPConn)}, nil
}

// Every byte of a connection goes through the Network's connection: asks
// and replies over a tunnel that transforms its bytes work like any other
// message. (A lone ask on a quiet connection is written inline, with a
// system call on the socket's descriptor; that must not go around the
// connection the Network returned.) Before, it did, and the peer read the
// untransformed bytes and closed the connection.
func TestAsksGoThroughTheNetworksConnection(t *testing.T) {
	server := newEnv(t, "server", nil, netty.WithNetwork(xorNetwork{}))
	register(t, server, "echo", newEcho())
	client := newClientEnv(t, "client", nil, netty.WithNetwork(xorNetwork{}))
	ref := lookup(t, client, server.Address(), "echo")
	for i := range 20 {
		if got := askString(t, ref, "through the tunnel"); got != "through the tunnel" {
			t.Fatalf("ask %d: got %q", i, got)
		}
	}
}
