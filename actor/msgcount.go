// Message counters: sent and received messages by endpoint and message type.

package actor

import (
	"reflect"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
)

// Received messages are counted by the mailbox of the endpoint they are
// posted to, under the lock the poster takes anyway (mailbox.postCounted):
// an increment on a cache line the poster holds already, nothing for the
// endpoint's loop. The collector reads them under that lock. When an
// endpoint stops, its counts are added to its name's counters (retire), so
// that a name registered again and again keeps its total and the table does
// not grow.

// msgCounter counts the messages of one type for one endpoint name: sent
// to it from this env (senders add from any goroutine), and received by
// the name's stopped endpoints (under msgTable.mu). sent is on a cache line
// of its own. The counter is 192 bytes, a size class of whole cache lines,
// so that its lines are its own (at 136 bytes, in the class of 144, whose
// objects do not start on line boundaries, its first line, read at every
// send, was shared with whatever object lay before it;
// TestMsgCounterOwnsItsCacheLines).
type msgCounter struct {
	typ      reflect.Type
	endpoint string
	typeName string
	// generated says typ is a pointer to a struct that protoc-gen-go
	// generated (generatedType), whose messages are valid when not nil.
	generated bool
	_         [64 - 49]byte
	sent      atomic.Uint64
	_         [56]byte
	received  uint64 // of the name's stopped endpoints, under msgTable.mu
	_         [56]byte
}

// msgKey identifies a msgCounter.
type msgKey struct {
	endpoint string
	typ      reflect.Type
}

// msgTable holds the env's message counters. An entry is made the first
// time an endpoint name sees a message type and lives as long as the env:
// the names are those of endpoints this env registered or sent to, and the
// types those of the protobuf registry, so the table stays small.
type msgTable struct {
	m     sync.Map   // msgKey -> *msgCounter
	names sync.Map   // reflect.Type -> string, the full name of a message type
	mu    sync.Mutex // orders retire against collect: a count is never seen twice, or missed
	// sentNames counts the counters made for sent messages: their names
	// come from references, which peers may write (an executor's), so
	// past maxSentCounters they are counted under OtherEndpoints. sentMu
	// guards it, and makes sent counters one at a time.
	sentMu    sync.Mutex
	sentNames int
}

// maxSentCounters bounds the counters of sent messages by endpoint name
// and type; the rest are counted under the endpoint name OtherEndpoints.
const maxSentCounters = 256

// OtherEndpoints is the endpoint label of the messages sent to endpoint
// names beyond the first maxSentCounters (name, type) pairs.
const OtherEndpoints = "_other"

// sentCounter is counter for a message sent to endpoint, bounded by
// maxSentCounters.
func (t *msgTable) sentCounter(endpoint string, typ reflect.Type, msg proto.Message) *msgCounter {
	k := msgKey{endpoint, typ}
	if v, ok := t.m.Load(k); ok {
		return v.(*msgCounter)
	}
	// Senders that make the same pair at once count it once.
	t.sentMu.Lock()
	defer t.sentMu.Unlock()
	if v, ok := t.m.Load(k); ok {
		return v.(*msgCounter)
	}
	if t.sentNames >= maxSentCounters {
		endpoint = OtherEndpoints
	} else {
		t.sentNames++
	}
	return t.counter(endpoint, typ, msg)
}

// counter returns the counter of endpoint and typ, making it if needed;
// msg, when not nil, is a message of that type, which names it.
func (t *msgTable) counter(endpoint string, typ reflect.Type, msg proto.Message) *msgCounter {
	k := msgKey{endpoint, typ}
	if v, ok := t.m.Load(k); ok {
		return v.(*msgCounter)
	}
	if msg != nil {
		t.names.LoadOrStore(typ, string(msg.ProtoReflect().Descriptor().FullName()))
	}
	v, _ := t.m.LoadOrStore(k, &msgCounter{endpoint: endpoint, typ: typ, typeName: t.typeName(typ), generated: generatedType(typ)})
	return v.(*msgCounter)
}

// typeName returns the protobuf full name of the message type typ (a
// pointer to a generated struct). A type that cannot tell its name from a
// nil value (dynamicpb's, whose messages of every type share one Go type)
// is named by the first message counted, or by its Go type.
func (t *msgTable) typeName(typ reflect.Type) string {
	if v, ok := t.names.Load(typ); ok {
		return v.(string)
	}
	name := typ.String()
	func() {
		defer func() { _ = recover() }() // a nil value that cannot describe itself
		if m, ok := reflect.Zero(typ).Interface().(proto.Message); ok {
			name = string(m.ProtoReflect().Descriptor().FullName())
		}
	}()
	v, _ := t.names.LoadOrStore(typ, name)
	return v.(string)
}

// retire adds the received counts of the stopped endpoint c to its name's
// counters. It runs once, after c's last message.
func (t *msgTable) retire(c *cell) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.mb.mu.Lock()
	counts := c.mb.postedLocked()
	c.mb.counts, c.mb.countTyp = nil, nil
	c.retired = true
	c.mb.mu.Unlock()
	for _, tc := range counts {
		t.counter(c.name, tc.typ, nil).received += tc.n
	}
}

// received calls fn with the messages received by each endpoint name and
// message type: the counts of the live endpoints and of the stopped ones.
func (e *Env) received(fn func(endpoint, typeName string, n uint64)) {
	t := &e.msgs
	t.mu.Lock()
	defer t.mu.Unlock()
	type key struct{ endpoint, typ string }
	sums := make(map[key]uint64)
	t.m.Range(func(_, v any) bool {
		if m := v.(*msgCounter); m.received > 0 {
			sums[key{m.endpoint, m.typeName}] += m.received
		}
		return true
	})
	e.liveCells.Range(func(k, _ any) bool {
		c := k.(*cell)
		c.mb.mu.Lock()
		if !c.retired {
			for _, tc := range c.mb.postedLocked() {
				sums[key{c.name, t.typeName(tc.typ)}] += tc.n
			}
		}
		c.mb.mu.Unlock()
		return true
	})
	for k, n := range sums {
		fn(k.endpoint, k.typ, n)
	}
}

// each calls fn with every counter.
func (t *msgTable) each(fn func(c *msgCounter)) {
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
// of this env is not counted here but once, as received.
func (r *Ref) countSent(msg proto.Message) {
	typ := reflect.TypeOf(msg)
	c := r.sentTo.Load()
	if c == nil || c.typ != typ {
		c = r.env.msgs.sentCounter(r.name, typ, msg)
		r.sentTo.Store(c)
	}
	c.sent.Add(1)
}

// receivedCount returns the number of messages posted to the endpoint (its
// counted messages); the caller holds c.mb.mu.
func (c *cell) receivedCount() uint64 {
	var n uint64
	for _, tc := range c.mb.postedLocked() {
		n += tc.n
	}
	return n
}

// postMessage posts msg, a message of the type typ, counted as received.
func (c *cell) postMessage(msg any, typ reflect.Type) { c.mb.postCounted(msg, typ) }
