package resourcemanager

import (
	"context"
	"sync"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
)

// nodeAsks are the resource manager's asks to node managers (container
// starts and stops) whose answers goroutines of their own wait for, so that
// the endpoint's loop does not. Shutdown cancels them once the endpoint has
// stopped and waits for those goroutines: a node manager that never answers
// keeps none of them past it.
type nodeAsks struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newNodeAsks() *nodeAsks {
	ctx, cancel := context.WithCancel(context.Background())
	return &nodeAsks{ctx: ctx, cancel: cancel}
}

// ask sends msg to the node manager nm and hands its future to then, on a
// goroutine that Shutdown waits for. then's asks use a.ctx too.
func (a *nodeAsks) ask(nm *actor.Ref, msg proto.Message, then func(*actor.Future)) {
	f := nm.Ask(a.ctx, msg)
	a.wg.Go(func() { then(f) })
}
