package resourcemanager

import (
	"context"
	"sync"
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
