// Borrowed messages: large messages from other envs that alias the
// transport's read buffer instead of owning a copy, for endpoints that ask
// for them, and Retain, which keeps one valid past its handler.

package actor

import "google.golang.org/protobuf/proto"

// Borrower is implemented by endpoints that take large messages from other
// envs without a copy. For such an endpoint a transport may decode a large
// message (over netty, a frame larger than the connection's 64 KiB read
// buffer and at most 1 MiB) so that its bytes and string fields alias the
// pooled buffer the frame was read into, rather than copy its payload into
// memory of the message's own: the copy into new memory is most of what a
// large message costs (docs/performance.md, "The floor at 1 KiB and
// 64 KiB").
//
// A borrowed message is valid until the handler that receives it (Receive
// or ReceiveAndReply) returns. Then its buffer goes back to the transport's
// pool and is overwritten by a later frame: a handler that keeps the
// message, or any slice or string of it, past its return calls
// Context.Retain first and Release once it is done with it. Its bytes
// fields are read-only and must not be appended to (their capacity runs on
// into the rest of the frame), and its strings change with the buffer, so
// a string kept past Release (a map key, say) must be copied
// (strings.Clone). Keeping a borrowed message without Retain is a bug that
// the race detector reports when the buffer is reused; netty's
// spark.rpc.io.poisonReleasedBuffers overwrites every released buffer with
// a poison pattern so that such a use shows up in tests without it.
//
// Every other message is owned, as for any endpoint: small messages, the
// messages of a local send (the sender's own message, as always), those of
// the in-memory transport (a copy, as always), and large messages the
// transport copies because the connection has as much lent as its bound
// allows (netty's spark.rpc.io.maxLentBytesPerConnection). Retain is then a
// no-op, so a handler need not tell them apart.
//
// BorrowsMessages is asked once, at registration. An endpoint that is
// Isolated with a thread count above 1 always gets owned messages: its
// handlers share one Context, which cannot tell their messages apart.
type Borrower interface {
	BorrowsMessages() bool
}

// Retained keeps a borrowed message valid after its handler returned, until
// Release. Its zero value, which Retain returns for an owned message, keeps
// nothing and its Release does nothing.
type Retained struct{ loan Loan }

// Release ends what Retain kept: once every Retained of a message has been
// released, and its handler has returned, the transport may reuse the
// message's memory. Release is called once per Retain, from any goroutine;
// a second call is a bug (the transport's buffer may already hold another
// message).
func (r Retained) Release() {
	if r.loan != nil {
		r.loan.Release()
	}
}

// Retain keeps the message the endpoint is handling valid after the handler
// returns, until the Retained it returns is released (see Borrower). The
// handler calls it on its own goroutine before it returns; for an owned
// message (every message of an endpoint that is not a Borrower) it keeps
// nothing and costs nothing.
func (c *Context) Retain() Retained {
	l := c.cell.loan
	if l == nil {
		return Retained{}
	}
	l.Retain()
	return Retained{loan: l}
}

// borrows reports whether ep borrows messages (see Borrower) on a cell
// whose thread count is threads.
func borrows(ep Endpoint, threads int) bool {
	b, ok := ep.(Borrower)
	return ok && threads <= 1 && b.BorrowsMessages()
}

// decode returns the message of d: lent, with its loan, when the endpoint
// borrows messages and d can lend, and decoded into memory of its own
// otherwise (a nil Loan). false when it cannot be decoded (d reported why).
func (c *cell) decode(d Deferred) (proto.Message, Loan, bool) {
	if c.borrows {
		if l, ok := d.(Lender); ok {
			return l.Lend()
		}
	}
	msg, ok := d.Decode()
	return msg, nil, ok
}

// receiveLent handles msg, whose memory is loan's, with loan as what
// Context.Retain retains, and then releases the handler's reference: the
// one-way message msg when ask is nil, else the ask. A borrowing endpoint
// is serial, so the handler has returned when the receive does.
func (c *cell) receiveLent(msg proto.Message, loan Loan, ask *inboundAsk) {
	c.loan = loan
	defer func() {
		c.loan = nil
		loan.Release()
	}()
	if ask == nil {
		c.receive(msg, nil)
		return
	}
	ask.req = msg
	c.receiveAsk(ask)
}
