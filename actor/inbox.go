// A running endpoint's queue as a transport keeps it: the Inbox of TransportHost.Inbox.

package actor

import (
	"reflect"
	"sync/atomic"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"
)

// inbox is the Inbox of one endpoint. It refers to the endpoint's cell only
// until the endpoint stops, so that a transport that keeps it (one per
// target, for as long as a connection lives) keeps no stopped endpoint in
// memory.
type inbox struct {
	c atomic.Pointer[cell]
}

func newInbox(c *cell) *inbox {
	in := &inbox{}
	in.c.Store(c)
	return in
}

// Post queues msg as Deliver would for a running endpoint, and reports
// false once the endpoint is stopping.
func (in *inbox) Post(sender *protoactor.PID, msg proto.Message) bool {
	c := in.c.Load()
	if c == nil || c.stopping.Load() {
		return false
	}
	var m any = msg
	if sender != nil {
		m = &protoactor.MessageEnvelope{Message: msg, Sender: sender}
	}
	c.postMessage(m, reflect.TypeOf(msg))
	return true
}

// close lets the endpoint go: later Posts report false.
func (in *inbox) close() { in.c.Store(nil) }
