// The simulated network: an actor.Transport per node whose messages wait in
// the world's event queue until the simulator delivers them.

package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// network is the simulated network. Transports (node) capture what the
// code under test sends, from any goroutine, into pending; the world's loop
// takes that batch once every goroutine is idle, and schedules each message
// as an event on its connection. A connection (one direction between two
// nodes) delivers in the order it was sent, always: the delays the
// simulator draws can reorder messages across connections only, as the
// real transports guarantee. A link (both directions) can be held (a
// partition, or a paused node) and cut (its in-flight messages are lost
// and both sides see a disconnection).
type network struct {
	w *World

	mu      sync.Mutex
	nodes   map[string]*node
	links   map[[2]string]*link
	conns   map[[2]string]*conn
	pending []*envelope // sent since the world last took them
	spikes  int         // delay windows in force
}

// node is one env's transport.
type node struct {
	net    *network
	info   actor.TransportInfo
	host   actor.TransportHost
	max    int
	killed bool // its process is gone: it sends and receives nothing
	paused bool // its process is stopped: what it sends and receives waits
	slow   time.Duration
}

// link is the state both directions between two nodes share.
type link struct {
	connected bool
	epoch     int  // bumped when the link is cut: older envelopes are lost
	held      bool // partitioned: deliveries wait for the heal
}

// conn is one direction of a link: the order of its envelopes.
type conn struct {
	from, to string
	lastDue  time.Time   // deliveries are never due before the previous one
	held     []*envelope // waiting for a heal or a resume, in order
}

// envelope is one message (or connection event) in flight.
type envelope struct {
	from, to string
	target   *protoactor.PID
	sender   *protoactor.PID
	msg      proto.Message
	kind     envKind
	epoch    int
	desc     string // for the trace
}

type envKind uint8

const (
	envMessage envKind = iota
	envConnected
	envDisconnected
)

func newNetwork(w *World) *network {
	return &network{w: w, nodes: make(map[string]*node), links: make(map[[2]string]*link), conns: make(map[[2]string]*conn)}
}

// transport returns a listening transport at host:port.
func (n *network) transport(host string, port int) *node {
	addr := actor.NewRpcAddress(host, port)
	return &node{net: n, info: actor.TransportInfo{Identity: addr.HostPort(), Address: addr}}
}

// clientTransport returns a transport in client mode named id: the caller
// names it after what it runs, so that a seed names its clients the same
// way every run, whatever order goroutines create them in.
func (n *network) clientTransport(id string) *node {
	return &node{net: n, info: actor.TransportInfo{Identity: id, ClientMode: true}}
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Start implements actor.Transport.
func (t *node) Start(host actor.TransportHost) (actor.TransportInfo, error) {
	max, err := host.Conf().MaxMessageSize()
	if err != nil {
		return actor.TransportInfo{}, err
	}
	t.host, t.max = host, max
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	if _, taken := t.net.nodes[t.info.Identity]; taken {
		return actor.TransportInfo{}, fmt.Errorf("sim: address %s already in use", t.info.Identity)
	}
	t.net.nodes[t.info.Identity] = t
	return t.info, nil
}

// Send implements actor.Transport: it captures the message; the world
// delivers it later.
func (t *node) Send(target, sender *protoactor.PID, msg proto.Message) error {
	if size := proto.Size(msg); size > t.max {
		return &actor.MessageTooLargeError{Size: size, Limit: t.max}
	}
	n := t.net
	n.mu.Lock()
	peer := n.nodes[target.Address]
	if t.killed || n.nodes[t.info.Identity] != t {
		n.mu.Unlock()
		return &actor.ConnectionClosedError{Addr: target.Address, Cause: fmt.Errorf("sim: transport closed")}
	}
	key := pairKey(t.info.Identity, target.Address)
	l := n.links[key]
	if peer == nil || peer.killed || (peer.info.ClientMode && (l == nil || !l.connected)) {
		n.mu.Unlock()
		return &actor.ConnectionClosedError{Addr: target.Address, Cause: fmt.Errorf("sim: connection refused")}
	}
	if l == nil {
		l = &link{}
		n.links[key] = l
	}
	fresh := !l.connected
	l.connected = true
	if fresh {
		n.pending = append(n.pending, &envelope{from: t.info.Identity, to: peer.info.Identity, kind: envConnected, epoch: l.epoch})
	}
	n.pending = append(n.pending, &envelope{from: t.info.Identity, to: peer.info.Identity, target: target, sender: sender,
		msg: proto.Clone(msg), epoch: l.epoch})
	n.mu.Unlock()
	if fresh {
		t.host.Connected(actor.Peer{Identity: peer.info.Identity, Address: t.PeerAddress(peer.info.Identity)})
	}
	n.w.wake()
	return nil
}

// PeerAddress implements actor.Transport.
func (t *node) PeerAddress(identity string) actor.RpcAddress {
	t.net.mu.Lock()
	peer := t.net.nodes[identity]
	t.net.mu.Unlock()
	if peer == nil {
		return actor.RpcAddress{}
	}
	return peer.address()
}

func (t *node) address() actor.RpcAddress {
	if t.info.ClientMode {
		return actor.RpcAddress{Host: t.info.Identity, Port: 0}
	}
	return t.info.Address
}

// Shutdown implements actor.Transport: the node leaves the network; each
// peer sees the disconnection after what was already on the way to it.
func (t *node) Shutdown(context.Context) error {
	n := t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.nodes[t.info.Identity] == t {
		delete(n.nodes, t.info.Identity)
	}
	if t.killed {
		return nil
	}
	for _, other := range n.linkedLocked(t.info.Identity) {
		l := n.links[pairKey(t.info.Identity, other)]
		l.connected = false
		n.pending = append(n.pending, &envelope{from: t.info.Identity, to: other, kind: envDisconnected, epoch: l.epoch})
	}
	n.w.wake()
	return nil
}

// linkedLocked returns the nodes connected to id, sorted.
func (n *network) linkedLocked(id string) []string {
	var out []string
	for key, l := range n.links {
		if !l.connected || (key[0] != id && key[1] != id) {
			continue
		}
		other := key[0]
		if other == id {
			other = key[1]
		}
		out = append(out, other)
	}
	slices.Sort(out)
	return out
}

// takePending returns what was sent since the last call, grouped by
// connection in a canonical order of connections, each connection's
// envelopes in the order they were sent.
func (n *network) takePending() []*envelope {
	n.mu.Lock()
	p := n.pending
	n.pending = nil
	n.mu.Unlock()
	slices.SortStableFunc(p, func(a, b *envelope) int {
		if c := strings.Compare(a.from, b.from); c != 0 {
			return c
		}
		return strings.Compare(a.to, b.to)
	})
	return p
}

// connLocked returns the connection from → to.
func (n *network) connLocked(from, to string) *conn {
	key := [2]string{from, to}
	c := n.conns[key]
	if c == nil {
		c = &conn{from: from, to: to}
		n.conns[key] = c
	}
	return c
}

// heldLocked reports whether deliveries on the connection wait: its link
// is partitioned or one of its ends is paused.
func (n *network) heldLocked(from, to string) bool {
	if l := n.links[pairKey(from, to)]; l != nil && l.held {
		return true
	}
	for _, id := range []string{from, to} {
		if nd := n.nodes[id]; nd != nil && nd.paused {
			return true
		}
	}
	return false
}

// cutLocked cuts the link between a and b: what is in flight on it is
// lost, and each live side that was connected sees a disconnection, after
// delay.
func (n *network) cutLocked(a, b string) (notify []*envelope) {
	l := n.links[pairKey(a, b)]
	if l == nil || !l.connected {
		return nil
	}
	l.connected = false
	l.held = false
	l.epoch++
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		c := n.connLocked(pair[0], pair[1])
		c.held = nil
		if nd := n.nodes[pair[1]]; nd != nil && !nd.killed {
			notify = append(notify, &envelope{from: pair[0], to: pair[1], kind: envDisconnected, epoch: l.epoch})
		}
	}
	return notify
}

// deliver hands e to its destination, or holds it, or drops it. It runs on
// the world's loop.
func (n *network) deliver(e *envelope) {
	n.mu.Lock()
	l := n.links[pairKey(e.from, e.to)]
	if l == nil || l.epoch != e.epoch {
		n.mu.Unlock()
		n.w.stats.lost++
		n.w.trace.add("lost %s", e.desc)
		return
	}
	c := n.connLocked(e.from, e.to)
	if n.heldLocked(e.from, e.to) || len(c.held) > 0 {
		c.held = append(c.held, e)
		n.mu.Unlock()
		n.w.trace.add("held %s", e.desc)
		return
	}
	n.mu.Unlock()
	n.deliverNow(e)
}

// deliverNow hands e to its destination, which must not be held.
func (n *network) deliverNow(e *envelope) {
	n.mu.Lock()
	to, from := n.nodes[e.to], n.nodes[e.from]
	n.mu.Unlock()
	if to == nil || to.killed {
		n.w.stats.lost++
		n.w.trace.add("lost %s (no receiver)", e.desc)
		return
	}
	n.w.trace.add("deliver %s", e.desc)
	peer := actor.Peer{Identity: e.from, Address: addressOf(from, e.from)}
	switch e.kind {
	case envConnected:
		to.host.Connected(peer)
	case envDisconnected:
		to.host.Disconnected(peer, nil)
	default:
		n.w.observeDelivery(e)
		if e.sender == nil && strings.HasPrefix(e.target.Id, "future$") {
			if r, st := to.host.LookupReply(e.from, []byte(e.target.Id)); st == actor.ReplyPending {
				r.Complete(e.msg)
			}
			return
		}
		to.host.Deliver(e.target, actor.Inbound{Sender: e.sender, Msg: e.msg, From: e.from})
		if e.to == n.w.app.driverID {
			n.w.raceAfter(e)
		}
	}
}

// addressOf is the address a peer is seen under, also once it has left.
func addressOf(nd *node, id string) actor.RpcAddress {
	if nd != nil {
		return nd.address()
	}
	if host, port, ok := strings.Cut(id, ":"); ok {
		if p, err := strconv.Atoi(port); err == nil {
			return actor.NewRpcAddress(host, p)
		}
	}
	return actor.RpcAddress{Host: id, Port: 0}
}

// release returns the connections that are no longer held and have
// envelopes waiting.
func (n *network) release() []*conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	keys := make([][2]string, 0, len(n.conns))
	for k := range n.conns {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	var out []*conn
	for _, k := range keys {
		c := n.conns[k]
		if len(c.held) == 0 || n.heldLocked(c.from, c.to) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// drain1 delivers what waited on c, one envelope a step, in order; what
// arrives on c meanwhile waits behind.
func (w *World) drain1(c *conn) {
	n := w.net
	n.mu.Lock()
	if len(c.held) == 0 || n.heldLocked(c.from, c.to) {
		n.mu.Unlock()
		return
	}
	e := c.held[0]
	c.held = c.held[1:]
	more := len(c.held) > 0
	n.mu.Unlock()
	w.trace.add("release %s", e.desc)
	n.deliverNow(e)
	if more {
		w.at(w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { w.drain1(c) })
	}
}
