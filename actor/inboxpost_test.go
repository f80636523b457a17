package actor_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TransportHost.Inbox finds a running endpoint by name, and its Post queues
// as Deliver does until the endpoint stops; then Post refuses and Inbox
// finds nothing under the name, or the endpoint that took it since.
func TestInboxPostsUntilTheEndpointStops(t *testing.T) {
	e := newEnv(t, nil)
	host := actor.HostOf(e)
	if in := host.Inbox("nobody"); in != nil {
		t.Fatalf("Inbox of an unregistered name = %v, want nil", in)
	}
	first := &testEndpoint{}
	ref := register(t, e, "inbox", first)
	in := host.Inbox("inbox")
	if in == nil {
		t.Fatal("Inbox of a running endpoint is nil")
	}
	if !in.Post(actor.Inbound{Msg: wrapperspb.String("posted")}) {
		t.Fatal("Post to a running endpoint reported false")
	}
	barrier(t, ref)
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	if in.Post(actor.Inbound{Msg: wrapperspb.String("late")}) {
		t.Fatal("Post to a stopped endpoint reported true")
	}
	if got := host.Inbox("inbox"); got != nil {
		t.Fatalf("Inbox of a stopped endpoint's name = %v, want nil", got)
	}
	second := &testEndpoint{}
	ref2 := register(t, e, "inbox", second)
	if !host.Inbox("inbox").Post(actor.Inbound{Msg: wrapperspb.String("to the new one")}) {
		t.Fatal("Post to the endpoint that took the name reported false")
	}
	barrier(t, ref2)
	if got := first.Events(); !slices.Contains(got, "receive:posted") || slices.Contains(got, "receive:late") {
		t.Fatalf("first endpoint's events %v", got)
	}
	if got := second.Events(); !slices.Contains(got, "receive:to the new one") {
		t.Fatalf("second endpoint's events %v", got)
	}
}

// Inbox.PostBatch queues a batch in order, counted as received, and keeps
// no reference to the caller's slice; once the endpoint stops it takes
// nothing and reports false.
func TestInboxPostBatch(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "batch", ep)
	in := actor.HostOf(e).Inbox("batch")
	batch := []actor.Inbound{{Msg: wrapperspb.String("a")}, {Msg: wrapperspb.String("b")}, {Msg: wrapperspb.String("c")}}
	if !in.PostBatch(batch) {
		t.Fatal("PostBatch to a running endpoint reported false")
	}
	clear(batch) // the caller reuses its slice at once
	barrier(t, ref)
	if got, want := ep.Events(), []string{"start", "receive:a", "receive:b", "receive:c", "ask:barrier"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	stats := e.EndpointStats()
	if len(stats) != 1 || stats[0].Received != 4 {
		t.Fatalf("EndpointStats = %+v, want 4 received (the batch and the barrier)", stats)
	}
	if err := e.Stop(ref); err != nil {
		t.Fatal(err)
	}
	if in.PostBatch([]actor.Inbound{{Msg: wrapperspb.String("late")}}) {
		t.Fatal("PostBatch to a stopped endpoint reported true")
	}
	if got := ep.Events(); slices.Contains(got, "receive:late") {
		t.Fatalf("the stopped endpoint received a late batch: %q", got)
	}
}

// deferredString is an actor.Deferred that decodes to a StringValue, or
// fails to when ok is false, and records when it is decoded.
type deferredString struct {
	v  string
	ok bool
	ep *testEndpoint
}

func (d *deferredString) Decode() (proto.Message, bool) {
	d.ep.record("decode:" + d.v)
	return wrapperspb.String(d.v), d.ok
}

func (d *deferredString) Type() reflect.Type { return reflect.TypeFor[*wrapperspb.StringValue]() }

// A deferred message posted with PostBatch is decoded on the endpoint's
// loop in its turn, after the messages before it were handled, and then
// handled as any other; one that cannot be decoded is not handled, and the
// loop goes on. Each is counted as received when posted.
func TestInboxPostBatchDecodesDeferredMessagesInTheirTurn(t *testing.T) {
	e := newEnv(t, nil)
	ep := &testEndpoint{}
	ref := register(t, e, "deferred", ep)
	in := actor.HostOf(e).Inbox("deferred")
	batch := []actor.Inbound{
		{Msg: wrapperspb.String("a")},
		{Deferred: &deferredString{v: "b", ok: true, ep: ep}},
		{Deferred: &deferredString{v: "bad", ep: ep}},
		{Msg: wrapperspb.String("c")},
	}
	if !in.PostBatch(batch) {
		t.Fatal("PostBatch to a running endpoint reported false")
	}
	barrier(t, ref)
	want := []string{"start", "receive:a", "decode:b", "receive:b", "decode:bad", "receive:c", "ask:barrier"}
	if got := ep.Events(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if stats := e.EndpointStats(); len(stats) != 1 || stats[0].Received != 5 {
		t.Fatalf("EndpointStats = %+v, want 5 received (the batch and the barrier)", stats)
	}
}
