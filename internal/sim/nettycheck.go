// What the world learns from netty seeds' tapped transports at each idle
// point, and the invariants netty makes checkable: every sender's
// messages to an endpoint arrive in the order sent, and no connection
// lives on a peer that Send cannot find.

package sim

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"runtime"
	"slices"
	"strings"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// Names of the invariants of netty seeds.
const (
	invSenderOrder = "a sender's messages to an endpoint arrive in order"
	invNoZombie    = "every connection's peer is one Send finds"
	zombieEvery    = 32
)

// tapRecord is a message a tapped transport was given to send, or handed
// to an endpoint.
type tapRecord struct {
	t              *tapped
	send           bool
	target, sender *protoactor.PID
	msg            proto.Message
	goroutine      uint64 // of a send: the order of Send calls is a goroutine's own
}

// goroutineID returns the calling goroutine's number.
func goroutineID() uint64 {
	var buf [40]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

func (n *tcpNet) tap(r tapRecord) {
	n.mu.Lock()
	n.taps = append(n.taps, r)
	n.mu.Unlock()
}

// flowKey is one sender's messages to one endpoint: those one goroutine
// of an env sent to it, whose order netty keeps (Sends from several
// goroutines at once have none).
type flowKey struct {
	from, to, target string
	goroutine        uint64
}

// flow is what a sender sent to an endpoint (fingerprints, in order) and
// how far deliveries have gone.
type flow struct {
	sent []string
	next int
}

// tcpIdle runs at an idle point of a netty seed: it schedules what was
// written and takes what the tapped transports saw (checking it unless
// quiet). It reports whether it scheduled anything.
func (w *World) tcpIdle(quiet bool) bool {
	n := w.tcp
	if n == nil {
		return false
	}
	segs := n.takePending()
	for _, s := range segs {
		w.scheduleSegment(s)
	}
	n.mu.Lock()
	taps := n.taps
	n.taps = nil
	n.mu.Unlock()
	if !quiet {
		w.observeTaps(taps)
	}
	return len(segs) > 0
}

// observeTaps checks what was sent and delivered since the last idle
// point: sends first, then deliveries, each grouped by env in a canonical
// order (each env's in the order they happened).
func (w *World) observeTaps(taps []tapRecord) {
	slices.SortStableFunc(taps, func(a, b tapRecord) int {
		if a.send != b.send {
			if a.send {
				return -1
			}
			return 1
		}
		return strings.Compare(a.t.host.name, b.t.host.name)
	})
	for _, r := range taps {
		if r.send {
			w.observeTapSend(r)
		} else {
			w.observeTapDelivery(r)
		}
	}
}

func isReplyTo(target, sender *protoactor.PID) bool {
	return sender == nil && strings.HasPrefix(target.Id, "future$")
}

func (w *World) observeTapSend(r tapRecord) {
	from := r.t.identity()
	e := &envelope{from: from, to: r.target.Address, target: r.target, sender: r.sender, msg: r.msg}
	w.stats.sent++
	w.observeSend(e)
	if isReplyTo(r.target, r.sender) {
		return
	}
	k := flowKey{from, r.target.Address, r.target.Id, r.goroutine}
	f := w.tcp.flows[k]
	if f == nil {
		f = &flow{}
		w.tcp.flows[k] = f
	}
	f.sent = append(f.sent, fingerprint(r.sender, r.msg))
}

func (w *World) observeTapDelivery(r tapRecord) {
	to := r.t.identity()
	from := w.checkOrder(to, r)
	e := &envelope{from: from, to: to, target: r.target, sender: r.sender, msg: r.msg}
	w.trace.add("deliver %s", describe(e, w.trace.dir))
	w.observeDelivery(e)
}

// checkOrder finds the sender of a delivered message among the flows to
// its endpoint (by its sender's address, or, for a one-way message, by
// what it holds), and checks that it comes after what that sender's flow
// delivered before. It returns the sender's identity ("?" if unknown).
func (w *World) checkOrder(to string, r tapRecord) string {
	n := w.tcp
	var keys []flowKey
	for k := range n.flows {
		if k.to == to && k.target == r.target.Id && (r.sender == nil || k.from == r.sender.Address) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b flowKey) int {
		if c := strings.Compare(a.from, b.from); c != 0 {
			return c
		}
		return cmp.Compare(a.goroutine, b.goroutine)
	})
	fp := fingerprint(r.sender, r.msg)
	w.stats.check(invSenderOrder)
	for _, k := range keys {
		f := n.flows[k]
		if i := slices.Index(f.sent[f.next:], fp); i >= 0 {
			f.next += i + 1
			return k.from
		}
	}
	for _, k := range keys {
		f := n.flows[k]
		if i := slices.Index(f.sent[:f.next], fp); i >= 0 {
			w.fail("%s: %s to %s on %s arrived after a later message of its sender (it was message %d of %d delivered so far)",
				invSenderOrder, fields(r.msg, w.trace.dir), r.target.Id, to, i+1, f.next)
			return k.from
		}
	}
	return "?"
}

// fingerprint identifies a message: its type, its bytes and, for an ask,
// its reply-to id.
func fingerprint(sender *protoactor.PID, msg proto.Message) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	h := sha256.New()
	h.Write([]byte(msg.ProtoReflect().Descriptor().FullName()))
	h.Write(b)
	if sender != nil {
		h.Write([]byte(sender.Id))
	}
	return string(h.Sum(nil)[:12])
}

// checkNetty checks that each live transport's attached connections are
// all on peers that Send finds: a connection counted in
// Stats.Connections whose peer is not in the transport's table
// (PeerKeyID finds no live connection) is one that no Send or reply
// reaches for as long as it lives. The driver's transport, which
// connections replace each other on, is checked at every idle point, the
// others at every zombieEvery-th.
func (w *World) checkNetty() {
	n := w.tcp
	if n == nil {
		return
	}
	n.mu.Lock()
	envs := slices.Clone(n.envs)
	n.mu.Unlock()
	for _, t := range envs {
		if (t.host.name != driverHost && w.idles%zombieEvery != 0) || !t.live() {
			continue
		}
		conns := t.Stats().Connections
		live := 0
		for _, ps := range t.PeerStats() {
			if _, ok := t.PeerKeyID(ps.Identity); ok {
				live++
			}
		}
		w.stats.check(invNoZombie)
		if conns > live && !t.zombie {
			t.zombie = true
			w.fail("%s: %s has %d connections, but only %d peers with a connection in its table", invNoZombie,
				t.host.name, conns, live)
		}
	}
}

// live reports whether t's env runs and its process lives.
func (t *tapped) live() bool {
	t.mu.Lock()
	down := t.down
	t.mu.Unlock()
	n := t.host.n
	n.mu.Lock()
	defer n.mu.Unlock()
	return !down && !t.host.killed
}

// askHost returns the host of the env whose identity is id, while it
// lives, to look its asks up.
func (w *World) askHost(id string) (actor.TransportHost, bool) {
	if w.tcp == nil {
		w.net.mu.Lock()
		nd := w.net.nodes[id]
		w.net.mu.Unlock()
		if nd == nil || nd.killed {
			return nil, false
		}
		return nd.host, true
	}
	w.tcp.mu.Lock()
	envs := slices.Clone(w.tcp.envs)
	w.tcp.mu.Unlock()
	for _, t := range envs {
		if t.identity() == id && t.live() {
			return t.th, true
		}
	}
	return nil, false
}

// tcpLeft lists what of the simulated TCP network outlives the
// application: envs not shut down, listeners, ends not closed.
func (w *World) tcpLeft() []string {
	n := w.tcp
	if n == nil {
		return nil
	}
	var left []string
	n.mu.Lock()
	envs := slices.Clone(n.envs)
	for key, l := range n.listeners {
		if !l.closed {
			left = append(left, "listener "+key)
		}
	}
	var ends []*tcpEnd
	for _, c := range n.conns {
		for _, e := range c.ends {
			if e != nil && !c.gaveUp {
				ends = append(ends, e)
			}
		}
	}
	n.mu.Unlock()
	for _, t := range envs {
		t.mu.Lock()
		if !t.down {
			left = append(left, "env "+t.host.name)
		}
		t.mu.Unlock()
	}
	for _, e := range ends {
		e.mu.Lock()
		if !e.closed && !e.reset {
			left = append(left, "open end of "+e.c.key)
		}
		e.mu.Unlock()
	}
	slices.Sort(left)
	return left
}
