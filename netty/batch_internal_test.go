package netty

import (
	"fmt"
	"slices"
	"testing"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// batchLog records, in one order, what a connection hands on: the batches
// its inboxes take and the messages its host delivers.
type batchLog struct {
	events []string
}

// batchHost is the TransportHost of the batch tests: Inbox and Deliver
// only.
type batchHost struct {
	actor.TransportHost
	log     *batchLog
	inboxes map[string]actor.Inbox
}

func (h *batchHost) Inbox(id string) actor.Inbox { return h.inboxes[id] }

func (h *batchHost) Deliver(target *protoactor.PID, in actor.Inbound) {
	h.log.events = append(h.log.events, fmt.Sprintf("deliver %s %s", target.Id, in.Msg.(*wrapperspb.StringValue).GetValue()))
}

// batchInbox records the batches it takes, or refuses them as an endpoint
// that is stopping does.
type batchInbox struct {
	name     string
	log      *batchLog
	stopping bool
}

func (*batchInbox) Accepts(protoreflect.FullName) bool { return true }

func (in *batchInbox) Post(m actor.Inbound) bool {
	msg := m.Msg
	if in.stopping {
		return false
	}
	in.log.events = append(in.log.events, fmt.Sprintf("post %s %s", in.name, msg.(*wrapperspb.StringValue).GetValue()))
	return true
}

func (in *batchInbox) PostBatch(batch []actor.Inbound) bool {
	if in.stopping {
		return false
	}
	first := batch[0].Msg.(*wrapperspb.StringValue).GetValue()
	last := batch[len(batch)-1].Msg.(*wrapperspb.StringValue).GetValue()
	in.log.events = append(in.log.events, fmt.Sprintf("batch %s %s..%s", in.name, first, last))
	return true
}

// The reader posts the messages it reads for one endpoint in batches of at
// most maxBatch (a lone message with Post); a message for another target
// posts the batch first, so the order of what the connection hands on is
// the order it read. A batch for an endpoint that stopped meanwhile is
// delivered through the host message by message, and a name that runs no
// endpoint is delivered through the host; and the reader keeps no message
// once it has flushed.
func TestReaderPostsInBatchesInOrder(t *testing.T) {
	log := &batchLog{}
	host := &batchHost{log: log, inboxes: map[string]actor.Inbox{
		"a": &batchInbox{name: "a", log: log},
		"b": &batchInbox{name: "b", log: log, stopping: true},
	}}
	c := &conn{t: &Transport{host: host}}
	tg := map[string]*target{}
	for _, id := range []string{"a", "b", "c"} {
		tg[id] = &target{pid: &protoactor.PID{Id: id}}
	}
	n := 0
	post := func(id string, k int) {
		for range k {
			n++
			c.post(tg[id], actor.Inbound{Msg: wrapperspb.String(fmt.Sprint(n))})
		}
	}
	post("a", maxBatch+8)
	post("b", 2)
	post("c", 1)
	post("a", 2)
	post("b", 1)
	post("a", 1)
	c.flush()
	want := []string{
		fmt.Sprintf("batch a 1..%d", maxBatch),
		fmt.Sprintf("batch a %d..%d", maxBatch+1, maxBatch+8),
		fmt.Sprintf("deliver b %d", maxBatch+9),
		fmt.Sprintf("deliver b %d", maxBatch+10),
		fmt.Sprintf("deliver c %d", maxBatch+11),
		fmt.Sprintf("batch a %d..%d", maxBatch+12, maxBatch+13),
		fmt.Sprintf("deliver b %d", maxBatch+14),
		fmt.Sprintf("post a %d", maxBatch+15),
	}
	if !slices.Equal(log.events, want) {
		t.Fatalf("handed on:\n%q\nwant\n%q", log.events, want)
	}
	if tg["b"].inbox != nil {
		t.Error("the connection still keeps the inbox of the endpoint that stopped")
	}
	if c.batchTo != nil || len(c.batch) != 0 {
		t.Errorf("after flush: batch of %d for %v", len(c.batch), c.batchTo)
	}
	for i, in := range c.batch[:cap(c.batch)] {
		if in.Msg != nil {
			t.Fatalf("the batch's slot %d still holds a message", i)
		}
	}
}
