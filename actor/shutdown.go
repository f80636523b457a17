// The env's shutdown: Shutdown, Close and waiting for termination.

package actor

import (
	"context"
)

// Shutdown stops the env, in this order:
//
//  1. it stops accepting work: every operation fails with ErrEnvStopped
//     from now on, and every endpoint is stopped as Stop does (it handles
//     the messages already queued, then OnStop runs);
//  2. it fails every pending ask made on this env, to a local or a remote
//     endpoint, at once with ErrEnvStopped (whatever its timeout);
//  3. it closes the transport: the listener and every connection, so that
//     the asks that peers have pending on this env fail at once; what was
//     queued for a peer is still written first, for at most a couple of
//     seconds and never past ctx;
//  4. it waits until every endpoint has run OnStop, and the loops have
//     ended, or until ctx ends.
//
// A handler that blocks therefore never keeps a connection open, nor an
// asker waiting. When ctx ends before every endpoint has stopped, Shutdown
// returns a *ShutdownError that wraps ctx's cause and names the endpoints
// still running; they stop in the background, and AwaitTermination or
// Terminated tell when. Calling Shutdown again waits again.
func (e *Env) Shutdown(ctx context.Context) error {
	e.beginShutdown(ctx)
	select {
	case <-e.terminated:
		return e.shutdownErr
	default:
	}
	select {
	case <-e.terminated:
		return e.shutdownErr
	case <-ctx.Done():
		return &ShutdownError{Env: e.name, Running: e.running(), Err: context.Cause(ctx)}
	}
}

// Close stops the env at once: the first three steps of Shutdown, except
// that the messages still queued for endpoints are dropped (counted by
// Dropped; the asks among them fail with ErrEnvStopped) instead of handled,
// and that nothing queued for a peer is written any more. It does not wait:
// each endpoint gets OnStop once its running handler, if any, returns, and
// Terminated is closed when all have. It always returns nil.
func (e *Env) Close() error {
	e.dropQueued.Store(true)
	if e.stopping.Load() {
		return nil // a Shutdown is under way; do not wait for its flush
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.beginShutdown(ctx)
	return nil
}

// beginShutdown runs the first three steps of Shutdown once; ctx bounds how
// long the transport may take to close.
func (e *Env) beginShutdown(ctx context.Context) {
	e.shutdownOnce.Do(func() {
		e.stopping.Store(true)
		e.mu.Lock()
		e.stopped.Store(true)
		e.mu.Unlock()
		e.endpoints.Range(func(_, v any) bool {
			_ = e.stopCell(v.(*cell))
			return true
		})
		e.futures.failAll(ErrEnvStopped)
		if e.transport != nil {
			// The transport gives up flushing and waiting for its
			// goroutines when ctx ends; that is not an error of its own.
			if err := e.transport.Shutdown(ctx); err != nil && ctx.Err() == nil {
				e.shutdownErr = err
			}
		}
		go e.finishShutdown()
	})
}

func (e *Env) finishShutdown() {
	e.live.Wait()
	e.loops.Wait() // an endpoint's own loop ends after its OnStop
	e.futures.close()
	e.shared.closeAndWait()
	e.sysMu.Lock()
	e.sysClosed = true
	s := e.system.Load()
	e.sysMu.Unlock()
	if s != nil {
		s.Shutdown()
	}
	if e.metricsGiven {
		e.unregisterMetrics() // a registry the env was given outlives it
	}
	e.log.Debug().Msg("env terminated")
	close(e.terminated)
}

// AwaitTermination waits until a Shutdown has completed or ctx ends.
func (e *Env) AwaitTermination(ctx context.Context) error {
	select {
	case <-e.terminated:
		return e.shutdownErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Terminated is closed once a Shutdown has completed.
func (e *Env) Terminated() <-chan struct{} { return e.terminated }
