package actor

import (
	"testing"
	"unsafe"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A reply finds its ask only from the peer the ask went to, and only
// while it is pending; a local ask is never found through its id.
func TestLookupReplyIsBoundToThePeer(t *testing.T) {
	e := &Env{futures: newFutureRegistry(), identity: "me:1"}
	f := newFuture(e, nil, nil, InfiniteTimeout())
	f.peer, f.want = "peer:1", "google.protobuf.StringValue"
	id, ok := e.futures.add(f)
	if !ok {
		t.Fatal("the registry refused an ask")
	}
	f.setReplyTo(e.identity, id)
	if _, st := lookupReply(e, "other:1", f.replyTo.Id); st != ReplyWrongPeer {
		t.Fatalf("lookup from another peer = %v, want ReplyWrongPeer", st)
	}
	r, st := lookupReply(e, "peer:1", []byte(f.replyTo.Id))
	if st != ReplyPending {
		t.Fatalf("lookup from the ask's peer = %v, want ReplyPending", st)
	}
	if r.Accepts("google.protobuf.Int64Value") || !r.Accepts("google.protobuf.StringValue") || !r.Accepts(rpcFailureName) {
		t.Fatal("the ask takes another type than its own and failures")
	}
	r.Complete(wrapperspb.String("real"))
	if res, err := f.Result(); err != nil || res.(*wrapperspb.StringValue).GetValue() != "real" {
		t.Fatalf("Result = %v, %v", res, err)
	}
	if _, st := lookupReply(e, "peer:1", f.replyTo.Id); st != ReplyNotPending {
		t.Fatalf("lookup of a completed ask = %v, want ReplyNotPending", st)
	}

	local := newFuture(e, nil, nil, InfiniteTimeout())
	lid, _ := e.futures.add(local)
	if _, st := lookupReply(e, "", futureID(lid)); st != ReplyNotPending {
		t.Fatalf("lookup of a local ask = %v, want ReplyNotPending", st)
	}
	local.complete(nil, nil)
}

// A plain protoactor future is bound to the peer its request went to.
func TestProtoactorFutureReplyIsBoundToThePeer(t *testing.T) {
	e := &Env{futures: newFutureRegistry(), identity: "me:1"}
	e.paReplies.bind("future$abc", "peer:1")
	if _, st := lookupReply(e, "other:1", "future$abc"); st != ReplyWrongPeer {
		t.Fatalf("lookup from another peer = %v, want ReplyWrongPeer", st)
	}
	if _, st := lookupReply(e, "other:1", "future$unbound"); st != ReplyNotPending {
		t.Fatalf("lookup of an unbound id = %v, want ReplyNotPending", st)
	}
}

// Reply-to ids are random: two asks in a row do not get neighbouring ids,
// and asks are still numbered in sequence.
func TestAskIDsAreRandom(t *testing.T) {
	e := &Env{futures: newFutureRegistry()}
	var prev, prevSeq uint64
	for range 100 {
		f := newFuture(e, nil, nil, InfiniteTimeout())
		id, _ := e.futures.add(f)
		if prev != 0 && (id-prev < 1<<20 || prev-id < 1<<20) {
			t.Fatalf("ids %d then %d: close enough to guess", prev, id)
		}
		if prevSeq != 0 && f.seq != prevSeq+1 {
			t.Fatalf("sequence %d after %d", f.seq, prevSeq)
		}
		prev, prevSeq = id, f.seq
		f.complete(nil, nil)
	}
}

// A bare Router handles the types it has handlers for, and nothing else.
func TestRouterHandles(t *testing.T) {
	r := NewRouter()
	Handle(r, func(*Context, *wrapperspb.StringValue) error { return nil })
	HandleAsk(r, func(*CallContext, *wrapperspb.Int64Value) (*wrapperspb.Int64Value, error) { return nil, nil })
	for name, want := range map[string]bool{
		"google.protobuf.StringValue": true, "google.protobuf.Int64Value": true, "google.protobuf.BytesValue": false,
	} {
		if got := r.Handles(protoreflectName(name)); got != want {
			t.Errorf("Handles(%s) = %v, want %v", name, got, want)
		}
	}
}

func protoreflectName(s string) protoreflect.FullName { return protoreflect.FullName(s) }

// A Future stays in the 352-byte size class: the reply binding's fields
// (seq, want) cost no allocation size on the ask path.
func TestFutureSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Future{}); n > 352 {
		t.Fatalf("a Future is %d bytes, over the 352-byte size class", n)
	}
}
