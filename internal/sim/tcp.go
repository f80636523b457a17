// The simulated TCP network that netty runs on in a netty seed: listeners,
// connections whose bytes move when the world delivers them, and what the
// faults do to them.

package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// tcpNet is the simulated TCP network. A host (one netty transport's
// netty.Network) listens and dials on it; a connection's two ends are
// net.Conns whose reads block on channels, so that they block durably in
// the bubble. What an end writes between two idle points becomes one
// segment of its direction (so that how netty's writer happened to batch
// its frames makes no difference); the world schedules each segment with
// a delay drawn from the seed, never before the direction's previous one,
// and delivers it when its turn comes. Deadlines are timers on the
// bubble's clock.
type tcpNet struct {
	w *World

	mu        sync.Mutex
	hosts     map[string]*tcpHost
	listeners map[string]*tcpListener // by the address listened on
	conns     map[string]*tcpConn     // every connection, by key
	pending   []*segment              // written since the world last took them
	holds     map[[2]string]int       // partitions in force between two hosts
	races     []*halfOpen             // half-open connections that may race a redial
	fast      map[*tcpConn]bool       // connections that deliver at once until the next idle point
	racing    atomic.Bool             // a race's step runs: netty's peer lock releases yield

	// The netty side (nettyapp.go, nettycheck.go).
	envs      []*tapped
	names     map[string]string // env identity → host name
	renamer   *strings.Replacer
	taps      []tapRecord // sent and delivered since the last idle point
	flows     map[flowKey]*flow
	chatEvery time.Duration // the chatty clients' mean interval
	chatBurst int           // and their largest burst
}

// tcpHost is one netty transport's view of the network: its
// netty.Network. Its address is an IP of its own.
type tcpHost struct {
	n      *tcpNet
	name   string // the simulator's name for it: driver, exec-1-2, chat-3
	ip     net.IP
	port   int // its last ephemeral port
	killed bool
	paused bool
	slow   time.Duration
}

func newTCPNet(w *World) *tcpNet {
	return &tcpNet{w: w, hosts: make(map[string]*tcpHost), listeners: make(map[string]*tcpListener),
		conns: make(map[string]*tcpConn), holds: make(map[[2]string]int), fast: make(map[*tcpConn]bool),
		names: make(map[string]string), flows: make(map[flowKey]*flow)}
}

// host returns the host named name, made on first use. Its IP derives
// from its name, so that it is the same whatever order hosts are made in.
func (n *tcpNet) host(name string) *tcpHost {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h := n.hosts[name]; h != nil {
		return h
	}
	f := fnv.New32a()
	f.Write([]byte(name))
	v := f.Sum32()
	h := &tcpHost{n: n, name: name, ip: net.IPv4(10, byte(v>>16), byte(v>>8), byte(v|1)), port: 40000}
	n.hosts[name] = h
	return h
}

func opError(op string, err error) error { return &net.OpError{Op: op, Net: "tcp", Err: err} }

// errAddrInUse is a Listen on an address taken.
var errAddrInUse = syscall.EADDRINUSE

// Listen implements netty.Network.
func (h *tcpHost) Listen(network, address string) (net.Listener, error) {
	n := h.n
	_, ps, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("sim: listen on %s: a fixed port is needed", address)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if l := n.listeners[address]; l != nil && !l.closed {
		return nil, opError("listen", errAddrInUse)
	}
	l := &tcpListener{h: h, addr: &net.TCPAddr{IP: h.ip, Port: port}, key: address, wake: make(chan struct{}, 1)}
	n.listeners[address] = l
	return l, nil
}

// DialContext implements netty.Network: the connect is a segment like
// any other; the dial returns when the world delivers it.
func (h *tcpHost) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	n := h.n
	n.mu.Lock()
	if h.killed {
		n.mu.Unlock()
		return nil, opError("dial", net.ErrClosed)
	}
	h.port++
	c := &tcpConn{key: fmt.Sprintf("%s:%d→%s", h.name, h.port, address), dialer: h, addr: address, dialed: make(chan error, 1)}
	c.ends[0] = &tcpEnd{c: c, side: 0, local: &net.TCPAddr{IP: h.ip, Port: h.port}, wake: make(chan struct{}, 1)}
	n.conns[c.key] = c
	n.pending = append(n.pending, &segment{c: c, dir: 0, connect: true})
	n.mu.Unlock()
	n.w.wake()
	select {
	case err := <-c.dialed:
		if err != nil {
			return nil, err
		}
		return c.ends[0], nil
	case <-ctx.Done():
		n.mu.Lock()
		c.gaveUp = true
		n.mu.Unlock()
		return nil, opError("dial", ctx.Err())
	}
}

// tcpListener is a host's listener.
type tcpListener struct {
	h      *tcpHost
	addr   *net.TCPAddr
	key    string
	queue  []*tcpEnd // accepted, not yet taken (under the network's lock)
	closed bool
	wake   chan struct{}
}

// Accept implements net.Listener.
func (l *tcpListener) Accept() (net.Conn, error) {
	n := l.h.n
	for {
		n.mu.Lock()
		if l.closed {
			n.mu.Unlock()
			return nil, opError("accept", net.ErrClosed)
		}
		if len(l.queue) > 0 {
			e := l.queue[0]
			l.queue = l.queue[1:]
			n.mu.Unlock()
			return e, nil
		}
		n.mu.Unlock()
		<-l.wake
	}
}

// Close implements net.Listener.
func (l *tcpListener) Close() error {
	n := l.h.n
	n.mu.Lock()
	l.closed = true
	if n.listeners[l.key] == l {
		delete(n.listeners, l.key)
	}
	queue := l.queue
	l.queue = nil
	n.mu.Unlock()
	signal(l.wake)
	for _, e := range queue {
		e.Close()
	}
	return nil
}

// Addr implements net.Listener.
func (l *tcpListener) Addr() net.Addr { return l.addr }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// connect runs a dial that reached its address: the listener accepts it,
// or the dial fails as refused.
func (n *tcpNet) connect(c *tcpConn) {
	w := n.w
	n.mu.Lock()
	l := n.listeners[c.addr]
	if c.gaveUp || c.dialer.killed {
		n.mu.Unlock()
		w.trace.add("connect %s abandoned", c.key)
		return
	}
	if l == nil || l.closed || l.h.killed {
		c.gaveUp = true // its dialer's end is never used
		n.mu.Unlock()
		w.trace.add("connect %s refused", c.key)
		c.dialed <- opError("dial", syscall.ECONNREFUSED)
		return
	}
	c.acceptor = l.h
	c.ends[0].remote = l.addr
	c.ends[1] = &tcpEnd{c: c, side: 1, local: l.addr, remote: c.ends[0].local, wake: make(chan struct{}, 1)}
	l.queue = append(l.queue, c.ends[1])
	n.mu.Unlock()
	w.trace.add("connect %s accepted", c.key)
	signal(l.wake)
	c.dialed <- nil
}

// connsOf returns the connections between one of hosts and the host named
// to (any host when to is empty), in the order of their keys.
func (n *tcpNet) connsOf(hosts []*tcpHost, to string) []*tcpConn {
	var out []*tcpConn
	for _, c := range n.conns {
		if c.acceptor == nil {
			continue
		}
		for _, h := range hosts {
			if (c.dialer == h && (to == "" || c.acceptor.name == to)) || (c.acceptor == h && (to == "" || c.dialer.name == to)) {
				out = append(out, c)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b *tcpConn) int { return strings.Compare(a.key, b.key) })
	return out
}

// cutLocked resets c: what is in flight is lost, and each live end sees
// the reset after a delay. It returns the resets to schedule.
func (n *tcpNet) cutLocked(c *tcpConn) []*segment {
	c.epoch++
	var out []*segment
	for dir := range 2 {
		c.dirs[dir].held = nil
		c.dirs[dir].late = false
		out = append(out, &segment{c: c, dir: dir, rst: true, epoch: c.epoch})
	}
	return out
}
