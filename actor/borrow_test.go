package actor_test

import (
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// lendingString is an actor.Lender of a StringValue whose loan counts its
// references: it records whether the loop decoded or lent it.
type lendingString struct {
	v      string
	ep     *testEndpoint
	refs   atomic.Int32
	freed  chan struct{} // closed when the last reference is released
	copied bool          // Lend hands the message over owned (a nil loan)
}

func newLendingString(v string, ep *testEndpoint) *lendingString {
	return &lendingString{v: v, ep: ep, freed: make(chan struct{})}
}

func (d *lendingString) Decode() (proto.Message, bool) {
	d.ep.record("decode:" + d.v)
	return wrapperspb.String(d.v), true
}

func (d *lendingString) Type() reflect.Type { return reflect.TypeFor[*wrapperspb.StringValue]() }

func (d *lendingString) Lend() (proto.Message, actor.Loan, bool) {
	if d.copied {
		d.ep.record("copy:" + d.v)
		return wrapperspb.String(d.v), nil, true
	}
	d.ep.record("lend:" + d.v)
	d.refs.Store(1)
	return wrapperspb.String(d.v), d, true
}

func (d *lendingString) Retain() {
	if d.refs.Add(1) <= 1 {
		panic("retained after release")
	}
}

func (d *lendingString) Release() {
	switch n := d.refs.Add(-1); {
	case n < 0:
		panic("released twice")
	case n == 0:
		close(d.freed)
	}
}

// borrower is a testEndpoint that borrows messages.
type borrower struct {
	*testEndpoint
	threads int
}

func (borrower) BorrowsMessages() bool { return true }

// isolatedBorrower is a borrower with a dedicated loop of threads
// goroutines.
type isolatedBorrower struct{ borrower }

func (b isolatedBorrower) ThreadCount() int { return b.threads }

// A borrowing endpoint gets a Lender's message lent, one way and asked:
// its loan is released once the handler returned, or, when the handler
// retained it, once that is released too. An endpoint that does not borrow
// gets the message decoded, and so does a borrower handed a copy.
func TestBorrowedMessagesAreReleasedAfterTheirHandler(t *testing.T) {
	e := newEnv(t, nil)
	var kept actor.Retained
	ep := &testEndpoint{
		receive: func(ctx *actor.Context, msg proto.Message) error {
			if text(msg) == "keep" {
				kept = ctx.Retain()
			}
			return nil
		},
		ask: func(ctx *actor.CallContext, msg proto.Message) error {
			ctx.Retain().Release() // retained and released within the handler
			ctx.Reply(msg)
			return nil
		},
	}
	ref := register(t, e, "borrower", borrower{testEndpoint: ep})
	plain := &testEndpoint{}
	plainRef := register(t, e, "plain", plain)

	one, keep, asked, copied := newLendingString("one", ep), newLendingString("keep", ep), newLendingString("asked", ep), newLendingString("copied", ep)
	copied.copied = true
	other := newLendingString("other", plain)
	if !actor.HostOf(e).Inbox("borrower").PostBatch([]actor.Inbound{{Deferred: one}, {Deferred: keep}, {Deferred: copied}}) {
		t.Fatal("PostBatch reported false")
	}
	if !actor.HostOf(e).Inbox("plain").PostBatch([]actor.Inbound{{Deferred: other}}) {
		t.Fatal("PostBatch reported false")
	}
	barrier(t, ref)
	barrier(t, plainRef)
	waitClosed(t, one.freed, "the loan of a message handled without Retain")
	select {
	case <-keep.freed:
		t.Fatal("a retained loan was released when its handler returned")
	default:
	}
	kept.Release()
	waitClosed(t, keep.freed, "a retained loan once released")
	if got, want := ep.Events(), []string{"start", "lend:one", "receive:one", "lend:keep", "receive:keep", "copy:copied", "receive:copied", "ask:barrier"}; !slices.Equal(got, want) {
		t.Fatalf("borrower's events %q, want %q", got, want)
	}
	if got, want := plain.Events(), []string{"start", "decode:other", "receive:other", "ask:barrier"}; !slices.Equal(got, want) {
		t.Fatalf("plain endpoint's events %q, want %q", got, want)
	}

	// An ask from another env arrives as a deferred message with a sender.
	in := actor.HostOf(e).Inbox("borrower")
	sender := protoactor.NewPID("elsewhere:7077", "future$.borrowed")
	if !in.PostBatch([]actor.Inbound{{Sender: sender, Deferred: asked}}) {
		t.Fatal("PostBatch reported false")
	}
	waitClosed(t, asked.freed, "the loan of an ask")
	if got := ep.Events(); !slices.Contains(got, "lend:asked") || !slices.Contains(got, "ask:asked") {
		t.Fatalf("events %q: want the ask lent and handled", got)
	}
}

// A borrower with more than one handler goroutine gets owned messages: its
// handlers share one Context. Retain on an owned message keeps nothing.
func TestConcurrentBorrowerGetsOwnedMessages(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{receive: func(ctx *actor.Context, _ proto.Message) error {
		ctx.Retain().Release()
		return nil
	}}
	ref := register(t, e, "concurrent", isolatedBorrower{borrower{testEndpoint: ep, threads: 2}})
	m := newLendingString("m", ep)
	if !actor.HostOf(e).Inbox("concurrent").PostBatch([]actor.Inbound{{Deferred: m}}) {
		t.Fatal("PostBatch reported false")
	}
	if err := ref.Send(str("local")); err != nil {
		t.Fatal(err)
	}
	barrier(t, ref)
	if got := ep.Events(); !slices.Contains(got, "decode:m") || slices.Contains(got, "lend:m") {
		t.Fatalf("events %q: want the message decoded, not lent", got)
	}
}

// waitClosed fails t unless ch closes within a bound.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not released", what)
	}
}
