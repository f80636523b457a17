package endpoints

// This file holds how an executor stops: shutdown on StopExecutor,
// decommissioning, and exitExecutor with its exit code.

import (
	"context"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// shutdown stops the runner off the loop (a handler must never wait for its
// own env to stop) and then marks the executor finished.
func (b *executorBackend) shutdown() {
	b.stopping.Store(true)
	r := b.runner
	b.stopHeartbeats()
	go func() {
		if r != nil {
			r.stop(b.opts.stopTimeout)
		}
		b.awaitNotified()
		b.finish()
	}()
}

// awaitNotified waits until the driver has answered the RemoveExecutor of
// exitExecutor, if there was one.
func (b *executorBackend) awaitNotified() {
	b.mu.Lock()
	f := b.notified
	b.mu.Unlock()
	if f == nil {
		return
	}
	if _, err := f.Result(); err != nil {
		b.log.Debug().Err(err).Msg("the driver did not acknowledge the executor's removal")
	}
}

func (b *executorBackend) stopHeartbeats() { b.hbOnce.Do(func() { close(b.hbStop) }) }

// decommission runs on RunExecutor's goroutine when its context ends.
func (b *executorBackend) decommission() {
	if b.stopping.Load() {
		return
	}
	if d := b.driver.Load(); d != nil {
		t := b.env.AskTimeout()
		if _, err := d.AskSyncWithTimeout(context.Background(), &messages.ExecutorDecommissioning{ExecutorId: b.cfg.ExecutorID}, t); err != nil {
			b.log.Warn().Err(err).Msg("could not tell the driver that the executor is decommissioning")
		}
	}
	if self := b.self.Load(); self == nil || self.Send(&messages.DecommissionExecutor{}) != nil {
		// Not started yet (or stopping): the registration that OnStart
		// may still begin must not turn this clean stop into an exit
		// with code 1.
		b.stopping.Store(true)
		b.finish()
	}
}

func (b *executorBackend) decommissionOnLoop() {
	if b.stopping.Load() {
		return
	}
	const reason = "Executor decommissioned"
	b.log.Info().Msg("Decommissioning: finishing the running tasks")
	if b.runner == nil {
		b.exitExecutor(0, reason, nil, true)
		return
	}
	idle := b.runner.drain()
	go func() {
		select {
		case <-idle:
			b.exitExecutor(0, reason, nil, true)
		case <-b.finished:
		}
	}()
}

// exitExecutor makes the executor exit with code and reason, once (Spark's
// exitExecutor): it tells the driver when notify is set, then shuts down.
func (b *executorBackend) exitExecutor(code int, reason string, cause error, notify bool) {
	if !b.stopping.CompareAndSwap(false, true) {
		b.log.Info().Str("reason", reason).Msg("Skip exiting executor since it's been already asked to exit before")
		return
	}
	b.mu.Lock()
	b.exitCode, b.exitReason, b.exitErr = code, reason, cause
	b.mu.Unlock()
	ev := b.log.Error()
	if code == 0 {
		ev = b.log.Info()
	}
	ev.Err(cause).Int("code", code).Msg(reason)
	if d := b.driver.Load(); notify && d != nil {
		// An ask, not a send: its reply shows that everything sent before
		// (the last status updates) reached the driver, so shutting the env
		// down after it loses nothing.
		f := d.AskWithTimeout(context.Background(), &messages.RemoveExecutor{ExecutorId: b.cfg.ExecutorID, Reason: reason},
			actor.RpcTimeout{Duration: b.opts.stopTimeout, Key: "executor stop timeout"})
		b.mu.Lock()
		b.notified = f
		b.mu.Unlock()
	}
	if self := b.self.Load(); self == nil || self.Send(&messages.Shutdown{ExitCode: int32(code)}) != nil {
		b.stopHeartbeats()
		go func() {
			b.awaitNotified()
			b.finish()
		}()
	}
}

func (b *executorBackend) finish() { b.finishOnce.Do(func() { close(b.finished) }) }

func (b *executorBackend) result() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exitCode == 0 {
		return nil
	}
	return &ExitError{Code: b.exitCode, Reason: b.exitReason, Err: b.exitErr}
}
