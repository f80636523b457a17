package netty_test

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// pipeNetwork is an in-process Network of net.Pipe connections: inside a
// synctest bubble, everything the transports wait on is a channel, so
// synctest.Wait can tell when they are all idle. Its gate, once armed,
// holds the next write of a dialled connection until it opens or the
// connection closes (a write that the close interrupts writes nothing).
type pipeNetwork struct {
	mu        sync.Mutex
	listeners map[string]*pipeListener
	ports     int

	gateArmed bool
	gate      chan struct{} // closed to open the gate
	held      chan struct{} // closed once a write waits at the gate
}

func newPipeNetwork() *pipeNetwork {
	return &pipeNetwork{listeners: map[string]*pipeListener{}, gate: make(chan struct{}), held: make(chan struct{})}
}

func (n *pipeNetwork) Listen(_, address string) (net.Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ports++
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000 + n.ports}
	l := &pipeListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr.String()] = l
	return l, nil
}

func (n *pipeNetwork) DialContext(ctx context.Context, _, address string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[address]
	n.ports++
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000 + n.ports}
	n.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("dial %s: connection refused", address)
	}
	a, b := net.Pipe()
	dialed := &pipeConn{Conn: a, n: n, local: local, remote: l.addr, gated: true, closed: make(chan struct{})}
	accepted := &pipeConn{Conn: b, n: n, local: l.addr, remote: local, closed: make(chan struct{})}
	select {
	case l.conns <- accepted:
		return dialed, nil
	case <-l.done:
		return nil, fmt.Errorf("dial %s: connection refused", address)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// armGate makes the next write of a dialled connection wait at the gate.
func (n *pipeNetwork) armGate() {
	n.mu.Lock()
	n.gateArmed = true
	n.mu.Unlock()
}

// openGate lets the held write go on.
func (n *pipeNetwork) openGate() { close(n.gate) }

type pipeListener struct {
	addr      *net.TCPAddr
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

// pipeConn is one end of a pipe with TCP addresses.
type pipeConn struct {
	net.Conn
	n             *pipeNetwork
	local, remote *net.TCPAddr
	gated         bool // a dialled end: its writes may wait at the gate
	closeOnce     sync.Once
	closed        chan struct{}
}

func (c *pipeConn) LocalAddr() net.Addr  { return c.local }
func (c *pipeConn) RemoteAddr() net.Addr { return c.remote }

func (c *pipeConn) Write(p []byte) (int, error) {
	if c.gated {
		c.n.mu.Lock()
		hold := c.n.gateArmed
		c.n.gateArmed = false
		c.n.mu.Unlock()
		if hold {
			close(c.n.held)
			select {
			case <-c.n.gate:
			case <-c.closed:
				return 0, net.ErrClosed
			}
		}
	}
	return c.Conn.Write(p)
}

func (c *pipeConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
