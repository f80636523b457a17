// Netty seeds: the application on netty's TCP transport, over the
// simulated TCP network, with a chatty client in every executor process.

package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// nettySalt seeds the generator of a seed's netty draws, which is not the
// world's: the seeds on the in-memory network draw exactly what they drew
// before netty seeds existed.
const nettySalt = 0x6e65747479

// driverHost is the driver's host name; it listens on driverHost:7077.
const driverHost = "driver"

// nettyOneIn is the share of the seeds that do not run the cluster that
// run on netty's TCP transport (over the simulated TCP network) rather than
// on the simulated in-memory network: one in nettyOneIn, drawn from the
// seed. A netty seed costs some ten times a seed on the in-memory network.
const nettyOneIn = 10

func nettyRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, nettySalt)) }

// setupNetty makes w a netty seed's world, if its seed is one: its TCP
// network, its half-open faults, and trace lines that name the envs'
// client identities (random) by the simulator's names.
func (w *World) setupNetty() {
	r := nettyRand(w.seed)
	if r.IntN(nettyOneIn) != 0 {
		return
	}
	w.tcp = newTCPNet(w)
	w.trace.rewrite = w.tcp.rename
	// While the jobs run: the application may end well before the other
	// faults' 20 seconds.
	first, last := w.cfg.jobs[0].submit, w.cfg.jobs[len(w.cfg.jobs)-1].submit+4*time.Second
	for range between(r, 1, 3) {
		f := fault{kind: faultHalfOpen, at: durBetween(r, first, last), target: between(r, 1, w.cfg.executors+2),
			prob: r.Float64()}
		// Three in four hold what the dialer writes a while before its
		// end is reset (a backlog for the old reader), the others hardly.
		if r.IntN(4) > 0 {
			f.length = durBetween(r, 300*time.Millisecond, 2000*time.Millisecond)
		} else {
			f.length = durBetween(r, time.Microsecond, 5*time.Millisecond)
		}
		w.cfg.faults = append(w.cfg.faults, f)
	}
	w.tcp.chatEvery = durBetween(r, 100*time.Millisecond, 600*time.Millisecond)
	w.tcp.chatBurst = between(r, 8, 32)
}

// tapped is a netty transport the simulator watches: what its env sends,
// what it delivers, and its peers.
type tapped struct {
	*netty.Transport
	w       *World
	host    *tcpHost
	onStart func(identity string)
	th      actor.TransportHost // the env, once started

	mu     sync.Mutex
	id     string
	down   bool // Shutdown was called
	zombie bool // a zombie connection was reported (the loop's)
}

// nettyTransport returns a netty transport on host name: listening on
// name:7077, or in client mode.
func (w *World) nettyTransport(name string, listen bool) *tapped {
	h := w.tcp.host(name)
	// The backoff's jitter comes from a source of the host's own, seeded
	// by the seed and the host's name.
	opts := []netty.Option{netty.WithNetwork(h), netty.WithLogger(zerolog.Nop()), netty.WithLockRelease(w.tcp.lockReleased),
		netty.WithRand(rand.New(rand.NewPCG(w.seed, hostSalt(name))))}
	if listen {
		opts = append(opts, netty.WithBindHost(name), netty.WithPort(7077))
	} else {
		opts = append(opts, netty.WithClientMode())
	}
	return &tapped{Transport: netty.NewTransport(opts...), w: w, host: h}
}

// hostSalt is a number drawn from a host's name: the second seed of its
// random source.
func hostSalt(name string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(name))
	return f.Sum64()
}

// Start implements actor.Transport.
func (t *tapped) Start(host actor.TransportHost) (actor.TransportInfo, error) {
	t.th = host
	info, err := t.Transport.Start(&tapHost{TransportHost: host, t: t})
	if err != nil {
		return info, err
	}
	t.mu.Lock()
	t.id = info.Identity
	t.mu.Unlock()
	t.w.tcp.register(t, info.Identity)
	if t.onStart != nil {
		t.onStart(info.Identity)
	}
	return info, nil
}

func (t *tapped) identity() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}

// Send implements actor.Transport: the world sees the message at its next
// idle point.
func (t *tapped) Send(target, sender *protoactor.PID, msg proto.Message) error {
	if target.Id != seqEndpointName { // the chatty clients' endpoint checks their order itself
		t.w.tcp.tap(tapRecord{t: t, send: true, target: target, sender: sender, msg: proto.Clone(msg), goroutine: goroutineID()})
	}
	return t.Transport.Send(target, sender, msg)
}

// Shutdown implements actor.Transport.
func (t *tapped) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	t.down = true
	t.mu.Unlock()
	return t.Transport.Shutdown(ctx)
}

// tapHost is the env as its tapped transport sees it: it records every
// message the transport hands to an endpoint.
type tapHost struct {
	actor.TransportHost
	t *tapped
}

func (h *tapHost) Deliver(target *protoactor.PID, in actor.Inbound) {
	h.t.w.tcp.tap(tapRecord{t: h.t, target: target, sender: in.Sender, msg: in.Msg})
	h.TransportHost.Deliver(target, in)
}

func (h *tapHost) Inbox(id string) actor.Inbox {
	in := h.TransportHost.Inbox(id)
	if in == nil {
		return nil
	}
	return &tapInbox{Inbox: in, t: h.t, target: id}
}

// tapInbox is an endpoint's inbox as a tapped transport posts to it.
type tapInbox struct {
	actor.Inbox
	t      *tapped
	target string
}

func (in *tapInbox) pid() *protoactor.PID {
	return &protoactor.PID{Address: in.t.identity(), Id: in.target}
}

// Post and PostBatch are where a connection's reader hands messages on
// (handedOn: in a race's step the reader then yields and is slow).
func (in *tapInbox) Post(m actor.Inbound) bool {
	if !in.Inbox.Post(m) {
		return false
	}
	in.t.w.tcp.handedOn()
	if in.target == seqEndpointName {
		return true
	}
	in.t.w.tcp.tap(tapRecord{t: in.t, target: in.pid(), sender: m.Sender, msg: m.Msg})
	return true
}

func (in *tapInbox) PostBatch(batch []actor.Inbound) bool {
	if !in.Inbox.PostBatch(batch) {
		return false
	}
	in.t.w.tcp.handedOn()
	if in.target == seqEndpointName {
		return true
	}
	for _, m := range batch {
		if m.Msg != nil {
			in.t.w.tcp.tap(tapRecord{t: in.t, target: in.pid(), sender: m.Sender, msg: m.Msg})
		}
	}
	return true
}

// register names an env's identity.
func (n *tcpNet) register(t *tapped, identity string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.envs = append(n.envs, t)
	n.names[identity] = t.host.name
	pairs := make([]string, 0, 2*len(n.names))
	for id, name := range n.names {
		if id != name {
			pairs = append(pairs, id, name)
		}
	}
	n.renamer = strings.NewReplacer(pairs...)
}

// rename replaces the envs' identities in a trace line by their names.
func (n *tcpNet) rename(line string) string {
	if !strings.Contains(line, "client-") { // netty's client identities start so
		return line
	}
	n.mu.Lock()
	r := n.renamer
	n.mu.Unlock()
	if r == nil {
		return line
	}
	return r.Replace(line)
}

// driverTransport is the driver env's transport and identity.
func (a *app) driverTransport() (actor.Transport, string) {
	w := a.w
	if w.tcp != nil {
		return w.nettyTransport(driverHost, true), driverHost + ":7077"
	}
	dn := w.net.transport(driverHost, 7077)
	return dn, dn.info.Identity
}

// executorTransport is the transport of the next env of ex's process;
// a.mu is held.
func (a *app) executorTransport(ex *executor) actor.Transport {
	w := a.w
	ex.made++
	name := fmt.Sprintf("exec-%s-%d", ex.id, ex.made)
	if w.tcp == nil {
		nd := w.net.clientTransport(name)
		ex.nodes = append(ex.nodes, nd)
		a.byNode[nd.info.Identity] = ex
		return nd
	}
	t := w.nettyTransport(name, false)
	ex.hosts = append(ex.hosts, t.host)
	t.onStart = func(id string) {
		a.mu.Lock()
		a.byNode[id] = ex
		a.mu.Unlock()
	}
	return t
}

// anyLive returns the k-th (modulo their number) of the executors that
// run and are not held, in the order of their numbers, or nil.
func (a *app) anyLive(k int) *executor {
	a.mu.Lock()
	n := a.started
	a.mu.Unlock()
	var live []*executor
	for i := 1; i <= n; i++ {
		if ex := a.live(strconv.Itoa(i)); ex != nil {
			live = append(live, ex)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[k%len(live)]
}

// hostsOf returns ex's hosts.
func (a *app) hostsOf(ex *executor) []*tcpHost {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*tcpHost(nil), ex.hosts...)
}

// The chatty client: in a netty seed, every executor process also runs a
// client env that sends bursts of numbered one-way messages to an
// endpoint of the driver's env, which checks that each client's numbers
// arrive in order. It gives the driver's connections a steady stream of
// frames from a peer that, unlike an executor, does not exit when its
// connection closes: it redials, and its new connection replaces the old
// one at the driver.

// seqEndpointName is the driver's endpoint that the chatty clients send to.
const seqEndpointName = "simSequence"

// seqSpan separates the clients' numbers: client k sends k*seqSpan+i.
const seqSpan = 1_000_000_000

// startChatter starts ex's chatty client (executor number k), which runs
// until ctx ends.
func (a *app) startChatter(ctx context.Context, ex *executor, k int) {
	w := a.w
	t := w.nettyTransport("chat-"+ex.id, false)
	a.mu.Lock()
	ex.hosts = append(ex.hosts, t.host)
	a.mu.Unlock()
	env, err := actor.NewEnv("simChatter", w.cfg.conf(), actor.WithTransport(t), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		w.fail("chatty client %s: %v", ex.id, err)
		return
	}
	a.mu.Lock()
	ex.envs = append(ex.envs, env)
	a.mu.Unlock()
	r := rand.New(rand.NewPCG(w.seed, uint64(k)))
	ref := env.RemoteRef(a.driverEnv.Address(), seqEndpointName)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = env.Shutdown(sctx)
		}()
		next := int64(0)
		for {
			d := w.tcp.chatEvery/2 + time.Duration(r.Int64N(int64(w.tcp.chatEvery)))
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			a.mu.Lock()
			skip := ex.paused || a.stopping
			a.mu.Unlock()
			if skip {
				continue
			}
			for range 1 + r.IntN(w.tcp.chatBurst) {
				_ = ref.Send(wrapperspb.Int64(int64(k)*seqSpan + next))
				next++
			}
		}
	}()
}

// seqEndpoint is the driver's endpoint of the chatty clients: each
// client's numbers must arrive in increasing order (some may be lost with
// a connection, none may overtake another).
type seqEndpoint struct {
	w    *World
	last map[int64]int64
}

func (s *seqEndpoint) Receive(_ *actor.Context, msg proto.Message) error {
	v, ok := msg.(*wrapperspb.Int64Value)
	if !ok {
		return nil
	}
	who, i := v.GetValue()/seqSpan, v.GetValue()%seqSpan
	if last, seen := s.last[who]; seen && i <= last {
		s.w.fail("%s: chatty client %d's message %d arrived after its message %d", invSenderOrder, who, i, last)
	}
	s.last[who] = i
	return nil
}

// registerSeq registers the chatty clients' endpoint on the driver's env.
func (a *app) registerSeq() error {
	if a.w.tcp == nil {
		return nil
	}
	_, err := a.driverEnv.RegisterEndpoint(seqEndpointName, &seqEndpoint{w: a.w, last: make(map[int64]int64)})
	return err
}
