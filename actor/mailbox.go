// An endpoint's mailbox: its queue and its turns on the shared loop.

package actor

import (
	"math"
	"reflect"
	"sync"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
)

// mailbox is the protoactor Mailbox of every endpoint: an unbounded queue
// with the semantics of protoactor's default mailbox (system messages
// first, suspend and resume, a panic escalated) that hands user messages
// to its consumer in
// batches: a sender appends to a chain of fixed-size segments under a
// mutex, and the consumer takes the whole chain at once, so that it locks
// once per batch instead of once per message. Segments are recycled; an
// idle mailbox holds none.
//
// A turn on a loop worker handles at most the dispatcher's Throughput
// messages. A mailbox that still has mail after that, while another
// mailbox waits for a worker, is scheduled again behind every mailbox
// already waiting, and gives its worker back: on a
// shared loop every endpoint with mail gets a turn within one round of
// quotas, however busy the others are.
type mailbox struct {
	mu         sync.Mutex
	head, tail *segment // posted user messages not yet taken
	// The user messages posted through postCounted, by type, under mu: the
	// poster holds mu and its cache line anyway, so counting costs it an
	// increment and the consumer nothing. countN messages of countTyp,
	// the type posted last, are not yet in counts.
	countTyp reflect.Type
	countN   uint64
	counts   []typeCount
	sys      []any // posted system messages
	nsys     atomic.Int32

	status atomic.Int32 // mailboxIdle or mailboxRunning

	invoker    protoactor.MessageInvoker
	dispatcher protoactor.Dispatcher
	// processFn is process as a func value, made once: a method value
	// made at each Schedule would be a heap allocation per turn.
	processFn func()

	// Owned by the goroutine that runs the mailbox.
	cur       *segment // the batch being processed
	pos       int      // next message of cur
	suspended bool
}

// segmentSize is the number of messages of a segment.
const segmentSize = 128

type segment struct {
	msgs [segmentSize]any
	// from holds, beside each message a PeerAware endpoint gets from
	// another env, that env (peer.go); made the first time a segment
	// carries one, and kept with the segment in the pool, so that a one-way
	// message's peer costs no allocation.
	from *[segmentSize]string
	n    int
	next *segment
}

var segmentPool = sync.Pool{New: func() any { return new(segment) }}

const (
	mailboxIdle int32 = iota
	mailboxRunning
	// mailboxHeld is the state of a new endpoint's mailbox: messages are
	// queued but not run until Start, so that no handler (OnStart first)
	// runs before the endpoint can be found by name.
	mailboxHeld
)

func newMailbox() protoactor.Mailbox {
	m := &mailbox{}
	m.processFn = m.process
	return m
}

// PostUserMessage queues a user message. Like protoactor's mailbox, it
// also queues each message of a MessageBatch before the batch itself.
func (m *mailbox) PostUserMessage(msg any) {
	if batch, ok := msg.(protoactor.MessageBatch); ok {
		for _, inner := range batch.GetMessages() {
			m.PostUserMessage(inner)
		}
	} else if env, ok := msg.(*protoactor.MessageEnvelope); ok {
		if batch, ok := env.Message.(protoactor.MessageBatch); ok {
			for _, inner := range batch.GetMessages() {
				m.PostUserMessage(inner)
			}
		}
	}
	m.mu.Lock()
	m.postLocked(msg)
	m.mu.Unlock()
	m.schedule()
}

// postCounted is PostUserMessage for a message counted under typ (see
// counts).
func (m *mailbox) postCounted(msg any, typ reflect.Type) {
	m.postCountedFrom(msg, typ, "")
}

// postCountedFrom is postCounted of a message from the env from, for a
// PeerAware endpoint ("": no peer to tell).
func (m *mailbox) postCountedFrom(msg any, typ reflect.Type, from string) {
	m.mu.Lock()
	m.countLocked(typ)
	m.postLocked(msg)
	if from != "" {
		m.fromLocked(from)
	}
	m.mu.Unlock()
	m.schedule()
}

// postInbound is postCounted of each message of batch, as a transport
// delivers it (see inboundMessage), under one lock; with peers (the
// endpoint is PeerAware), each one-way message with the peer it came from.
func (m *mailbox) postInbound(batch []Inbound, peers bool) {
	m.mu.Lock()
	for _, in := range batch {
		var item any
		if in.Deferred != nil {
			m.countLocked(in.Deferred.Type())
			item = deferredMessage(in.Sender, in.Deferred)
		} else {
			m.countLocked(reflect.TypeOf(in.Msg))
			item = inboundMessage(in.Sender, in.Msg)
		}
		m.postLocked(item)
		if peers && in.Sender == nil {
			m.fromLocked(peerOf(in.From))
		}
	}
	m.mu.Unlock()
	m.schedule()
}

// countLocked counts one message of typ as posted; the caller holds mu.
func (m *mailbox) countLocked(typ reflect.Type) {
	if typ == m.countTyp {
		m.countN++
	} else {
		m.foldCountLocked()
		m.countTyp, m.countN = typ, 1
	}
}

// foldCountLocked adds countN to counts.
func (m *mailbox) foldCountLocked() {
	if m.countN == 0 {
		return
	}
	for i := range m.counts {
		if m.counts[i].typ == m.countTyp {
			m.counts[i].n += m.countN
			m.countN = 0
			return
		}
	}
	m.counts = append(m.counts, typeCount{m.countTyp, m.countN})
	m.countN = 0
}

// typeCount is the number of messages of one type posted to a mailbox.
type typeCount struct {
	typ reflect.Type
	n   uint64
}

// postedLocked returns the counts of the messages posted through
// postCounted, by type; the caller holds mu.
func (m *mailbox) postedLocked() []typeCount {
	m.foldCountLocked()
	return m.counts
}

// postLocked queues msg; the caller holds mu.
func (m *mailbox) postLocked(msg any) {
	t := m.tail
	if t == nil || t.n == segmentSize {
		s := segmentPool.Get().(*segment)
		if t == nil {
			m.head = s
		} else {
			t.next = s
		}
		m.tail, t = s, s
	}
	t.msgs[t.n] = msg
	t.n++
}

// fromLocked records the env the message posted last came from; the
// caller holds mu.
func (m *mailbox) fromLocked(from string) {
	t := m.tail
	if t.from == nil {
		t.from = new([segmentSize]string)
	}
	t.from[t.n-1] = from
}

// PostSystemMessage queues a system message; it is handled before any
// user message still queued.
func (m *mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.sys = append(m.sys, msg)
	m.nsys.Add(1)
	m.mu.Unlock()
	m.schedule()
}

// RegisterHandlers implements protoactor.Mailbox.
func (m *mailbox) RegisterHandlers(invoker protoactor.MessageInvoker, dispatcher protoactor.Dispatcher) {
	m.invoker = invoker
	m.dispatcher = dispatcher
}

// Start implements protoactor.Mailbox: a held mailbox starts running what
// was queued.
func (m *mailbox) Start() {
	if m.status.CompareAndSwap(mailboxHeld, mailboxIdle) {
		m.schedule()
	}
}

// UserMessageCount returns the number of user messages queued and not yet
// taken by the consumer (a batch being processed is not counted).
func (m *mailbox) UserMessageCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.queuedLocked()
}

// queuedLocked is UserMessageCount with m.mu held.
func (m *mailbox) queuedLocked() int {
	n := 0
	for s := m.head; s != nil; s = s.next {
		n += s.n
	}
	return n
}

func (m *mailbox) schedule() {
	if m.status.Load() == mailboxIdle && m.status.CompareAndSwap(mailboxIdle, mailboxRunning) {
		m.dispatcher.Schedule(m.processFn)
	}
}

func (m *mailbox) process() {
	for {
		if m.run() {
			if c, ok := m.dispatcher.(contender); ok && !c.contended() {
				continue // no other mailbox waits for the worker
			}
			// Quota used: to the back of the queue, still marked
			// running so that no sender schedules it a second time.
			m.dispatcher.Schedule(m.processFn)
			return
		}
		// run leaves a batch behind when it was suspended or a handler
		// panicked.
		suspended, batch := m.suspended, m.cur != nil
		m.mu.Lock()
		m.status.Store(mailboxIdle)
		// A message posted after run saw none found the mailbox running
		// and did not schedule it: look again.
		more := len(m.sys) > 0 || (!suspended && (batch || m.head != nil))
		m.mu.Unlock()
		if !more || !m.status.CompareAndSwap(mailboxIdle, mailboxRunning) {
			return
		}
	}
}

// contender is a dispatcher that tells whether mailboxes wait for a worker.
type contender interface{ contended() bool }

// run handles messages until none is left (false), or until it has handled
// the dispatcher's Throughput of them while more may wait (true).
func (m *mailbox) run() (yield bool) {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
			yield = false
		}
	}()
	t := m.dispatcher.Throughput()
	if t <= 0 {
		t = math.MaxInt
	}
	for i := 0; ; i++ {
		if i >= t {
			return true
		}
		if m.nsys.Load() > 0 {
			if msg = m.popSystem(); msg != nil {
				switch msg.(type) {
				case *protoactor.SuspendMailbox:
					m.suspended = true
				case *protoactor.ResumeMailbox:
					m.suspended = false
				default:
					m.invoker.InvokeSystemMessage(msg)
				}
				continue
			}
		}
		if m.suspended {
			return false
		}
		var from string
		if msg, from = m.next(); msg == nil {
			return false
		}
		if from != "" {
			if pi, ok := m.invoker.(peerInvoker); ok {
				pi.invokeFrom(msg, from)
				continue
			}
		}
		m.invoker.InvokeUserMessage(msg)
	}
}

// next returns the next user message and the env it came from when its
// poster said ("" otherwise), or nil when none is queued.
func (m *mailbox) next() (any, string) {
	for {
		if s := m.cur; s != nil {
			if m.pos < s.n {
				msg, from := s.msgs[m.pos], ""
				s.msgs[m.pos] = nil
				if s.from != nil {
					from, s.from[m.pos] = s.from[m.pos], ""
				}
				m.pos++
				if msg == nil {
					continue // nothing to deliver
				}
				return msg, from
			}
			m.cur, m.pos = s.next, 0
			s.n, s.next = 0, nil
			segmentPool.Put(s)
			continue
		}
		m.mu.Lock()
		m.cur = m.head
		m.head, m.tail = nil, nil
		m.mu.Unlock()
		if m.cur == nil {
			return nil, ""
		}
	}
}

func (m *mailbox) popSystem() any {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sys) == 0 {
		return nil
	}
	msg := m.sys[0]
	n := copy(m.sys, m.sys[1:])
	m.sys[n] = nil
	m.sys = m.sys[:n]
	m.nsys.Add(-1)
	return msg
}
