// Message counters: sent and received messages by endpoint and message type.

package actor

import (
	"reflect"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
)

// msgCounter counts the messages of one type for one endpoint name. Senders
// add to sent from any goroutine, the endpoint's mailbox to received; both
// read typ. The three are on separate cache lines, so that neither counter
// moves the line the other side reads: a sender and the endpoint run on
// different cores and would otherwise pass the line back and forth on every
// message.
type msgCounter struct {
	typ      reflect.Type
	endpoint string
	typeName string
	_        [64 - 40]byte
	sent     atomic.Uint64
	_        [56]byte
	received atomic.Uint64
	_        [56]byte
}

// msgKey identifies a msgCounter. Received messages are counted per
// registered endpoint (owner), so that each counter has one writer, the
// endpoint's mailbox turn, and needs no locked add; the collector sums the
// counters of one name. Sent messages are counted per name (owner nil), and
// so are the messages received by the name's stopped endpoints (see
// msgTable.retire).
type msgKey struct {
	endpoint string
	typ      reflect.Type
	owner    *cell
}

// msgTable holds the env's message counters. A name's entry is made the
// first time it sees a message type and lives as long as the env: the names
// are those of endpoints this env registered or sent to, and the types those
// of the protobuf registry, so the table stays small. A registered
// endpoint's own received counters go when it stops: their counts are added
// to its name's entry (retire), so that registering a name again and again
// does not grow the table.
type msgTable struct {
	m  sync.Map   // msgKey -> *msgCounter
	mu sync.Mutex // orders retire against each: a count is never seen twice, or missed
}

// counter returns the counter of endpoint and msg's type, making it if
// needed; a counter made for an owner is listed in owner.counters.
func (t *msgTable) counter(endpoint string, typ reflect.Type, msg proto.Message, owner *cell) *msgCounter {
	k := msgKey{endpoint, typ, owner}
	if v, ok := t.m.Load(k); ok {
		return v.(*msgCounter)
	}
	c := &msgCounter{endpoint: endpoint, typ: typ, typeName: string(msg.ProtoReflect().Descriptor().FullName())}
	v, loaded := t.m.LoadOrStore(k, c)
	if !loaded && owner != nil {
		owner.counters = append(owner.counters, c) // on owner's mailbox turn, its only writer
	}
	return v.(*msgCounter)
}

// retire adds the received counts of the stopped endpoint c to its name's
// counters and forgets c's own. It runs after c's last mailbox turn.
func (t *msgTable) retire(c *cell) {
	if len(c.counters) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range c.counters {
		k := msgKey{endpoint: c.name, typ: m.typ}
		v, ok := t.m.Load(k)
		if !ok {
			v, _ = t.m.LoadOrStore(k, &msgCounter{endpoint: c.name, typ: m.typ, typeName: m.typeName})
		}
		v.(*msgCounter).received.Add(m.received.Load())
		t.m.Delete(msgKey{endpoint: c.name, typ: m.typ, owner: c})
	}
	c.counters = nil
}

// each calls fn with every counter.
func (t *msgTable) each(fn func(c *msgCounter)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m.Range(func(_, v any) bool {
		fn(v.(*msgCounter))
		return true
	})
}

// len returns the number of counters.
func (t *msgTable) len() int {
	n := 0
	t.m.Range(func(_, _ any) bool { n++; return true })
	return n
}

// countSent counts msg as sent to r's endpoint on another env. The counter
// of the type r sent last is cached in r, so that a Ref that sends one type
// (the common case) finds it without a map lookup. A message to an endpoint
// of this env is not counted here but once, as received: a locked add on the
// sender's side would add several nanoseconds to the ~50 a local send costs
// its sender.
func (r *Ref) countSent(msg proto.Message) {
	typ := reflect.TypeOf(msg)
	c := r.sentTo.Load()
	if c == nil || c.typ != typ {
		c = r.env.msgs.counter(r.name, typ, msg, nil)
		r.sentTo.Store(c)
	}
	c.sent.Add(1)
}

// countReceived counts msg as received by the endpoint. It runs on the
// endpoint's mailbox only (one turn at a time), which owns c.recvBy and is
// the only writer of its counters: a plain store, no locked add.
func (c *cell) countReceived(msg proto.Message) {
	if c.stopped.Load() {
		return // dropped, not received; and c's counters are retired
	}
	typ := reflect.TypeOf(msg)
	m := c.recvBy
	if m == nil || m.typ != typ {
		m = c.env.msgs.counter(c.name, typ, msg, c)
		c.recvBy = m
	}
	m.received.Store(m.received.Load() + 1)
}
