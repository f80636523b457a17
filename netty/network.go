// The network a Transport listens and dials on: the operating system's TCP,
// or one given with WithNetwork.

package netty

import (
	"context"
	"net"
)

// A Network is how a Transport reaches the network: how it listens for
// connections and how it opens one. The default is the operating system's
// TCP (net.Listen and a net.Dialer). WithNetwork gives another: a dialer
// that goes through a proxy or a tunnel, sockets with options of the
// caller's choice, or an in-process network for tests and simulations.
//
// The transport calls Listen once, at Start, with network "tcp" and a
// host:port address (port 0 for any free port), and DialContext for every
// connection it opens, with network "tcp", the peer's host:port identity
// and a ctx that ends at spark.rpc.io.connectionCreationTimeout or when the
// transport shuts down. The listener's Addr must be a *net.TCPAddr (the
// transport advertises its port); the connections' RemoteAddr is what the
// connection limits count by (the IP of a *net.TCPAddr) and the address a
// client-mode peer is known by. Connections must be safe for a reader and a
// writer at once and honour deadlines (SetDeadline and its read and write
// halves), which the handshake and the idle checks rely on; a Read that
// passes its deadline fails with an error that matches
// os.ErrDeadlineExceeded. A Listen that fails because the address is taken
// should return an error that matches syscall.EADDRINUSE, so that the
// transport tries the next port (spark.port.maxRetries).
type Network interface {
	Listen(network, address string) (net.Listener, error)
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// WithNetwork sets the network the transport listens and dials on (default:
// the operating system's TCP). TLS (spark.ssl.rpc.*) runs over its
// connections as over TCP's.
func WithNetwork(n Network) Option { return optionFunc(func(o *options) { o.network = n }) }

// tcpNetwork is the operating system's TCP.
type tcpNetwork struct{}

func (tcpNetwork) Listen(network, address string) (net.Listener, error) {
	return net.Listen(network, address)
}

func (tcpNetwork) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// network is the transport's network: WithNetwork's, or TCP.
func (t *Transport) network() Network {
	if t.opts.network != nil {
		return t.opts.network
	}
	return tcpNetwork{}
}
