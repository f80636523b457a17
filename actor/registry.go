// The registry of endpoints: registration, lookup by name, stop, and events posted to all.

package actor

import (
	"fmt"
	"slices"

	protoactor "github.com/asynkron/protoactor-go/actor"
)

// RegisterEndpoint registers ep under name and returns its reference
// (Spark's setupEndpoint). OnStart is queued as the endpoint's first message
// and runs once the name can be found, so that a peer answering what OnStart
// sends reaches the endpoint; registration does not wait for it. It fails
// with ErrInvalidName, a *DuplicateEndpointError, or ErrEnvStopped.
func (e *Env) RegisterEndpoint(name string, ep Endpoint) (*Ref, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if ep == nil {
		return nil, fmt.Errorf("%w: nil endpoint for %q", ErrInvalidName, name)
	}
	if pa, ok := ep.(PeerAware); ok && pa.PeerAware() {
		if iso, ok := ep.(Isolated); ok && iso.ThreadCount() > 1 {
			return nil, fmt.Errorf("%w: endpoint %q is PeerAware with %d threads: a PeerAware endpoint must be serial",
				ErrInvalidEndpoint, name, iso.ThreadCount())
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped.Load() {
		return nil, ErrEnvStopped
	}
	if _, ok := e.endpoints.Load(name); ok {
		return nil, &DuplicateEndpointError{Name: name}
	}
	sys := e.system.Load()
	if sys != nil {
		if _, taken := sys.ProcessRegistry.GetLocal(name); taken {
			return nil, &DuplicateEndpointError{Name: name} // a protoactor process
		}
	}
	// The cell is complete (its mailbox runs, OnStart is queued first)
	// before anything can find it: only then is it published.
	c := newCell(e, name, ep)
	e.live.Add(1)
	e.liveCells.Store(c, struct{}{})
	if sys != nil {
		sys.ProcessRegistry.Add(c, name)
	}
	e.endpoints.Store(name, c)
	// Only now may OnStart run: what it sets off (a peer that answers by
	// name at once) must find the endpoint.
	c.mb.Start()
	return c.ref, nil
}

// Endpoint returns the reference of the local endpoint name.
func (e *Env) Endpoint(name string) (*Ref, bool) {
	if c, ok := e.endpoints.Load(name); ok {
		return c.(*cell).ref, true
	}
	return nil, false
}

// Stop stops the endpoint of ref (Spark's stop(ref)): new messages to it
// fail with "Could not find NAME.", messages already queued are processed,
// then OnStop runs. The name is free for a new registration at once. It
// does not wait; stopping twice is a no-op.
func (e *Env) Stop(ref *Ref) error {
	if ref == nil {
		return fmt.Errorf("%w: nil ref", ErrInvalidName)
	}
	if ref.env != e || !ref.local() {
		return fmt.Errorf("%w: %s is not an endpoint of this env", ErrEndpointNotFound, ref)
	}
	c := ref.localCell()
	if c == nil {
		return nil
	}
	return e.stopCell(c)
}

func (e *Env) stopCell(c *cell) error {
	if !c.stopping.CompareAndSwap(false, true) {
		return nil
	}
	c.in.close()
	// Release the name at once, in the env and in the process registry, so
	// that it can be registered again while this endpoint still works
	// through its queue (Spark's unregisterRpcEndpoint). e.mu orders this
	// against RegisterEndpoint and System.
	e.mu.Lock()
	e.endpoints.CompareAndDelete(c.name, c)
	if s := e.system.Load(); s != nil {
		if cur, ok := s.ProcessRegistry.GetLocal(c.name); ok && cur == protoactor.Process(c) {
			s.ProcessRegistry.Remove(c.pid)
		}
	}
	e.mu.Unlock()
	c.post(theStopSignal)
	return nil
}

func (e *Env) cellStopped(c *cell) {
	e.msgs.retire(c)
	e.liveCells.Delete(c)
	e.live.Done()
}

// running returns the names of the endpoints that have not run OnStop yet.
func (e *Env) running() []string {
	var names []string
	e.liveCells.Range(func(k, _ any) bool {
		names = append(names, k.(*cell).name)
		return true
	})
	slices.Sort(names)
	return names
}

func (e *Env) postToAll(ev *netEvent) {
	if e.stopped.Load() {
		return
	}
	e.endpoints.Range(func(_, v any) bool {
		c := v.(*cell)
		if !c.stopping.Load() {
			c.post(ev)
		}
		return true
	})
}
