// The bridge to protoactor: the env's actor system, dead letters and protoactor's logging.

package actor

import (
	"context"
	"log/slog"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// System returns a protoactor actor system through which plain protoactor
// code reaches the env's endpoints: Send, Request and RequestFuture on a
// Ref's PID, locally and, through the transport, on other envs. The
// endpoints themselves do not run on it: it is created on the first call,
// so that an env whose caller never needs it does not carry its cost (a
// protoactor actor system allocates about a thousand maps for its process
// registry).
func (e *Env) System() *protoactor.ActorSystem {
	if s := e.system.Load(); s != nil {
		return s
	}
	e.sysMu.Lock()
	defer e.sysMu.Unlock()
	if s := e.system.Load(); s != nil {
		return s
	}
	plog := e.baseLog.With().Str("component", "protoactor").Logger()
	s := protoactor.NewActorSystem(
		protoactor.WithLoggerFactory(func(*protoactor.ActorSystem) *slog.Logger {
			return slog.New(quietHandler{zerolog.NewSlogHandler(plog)})
		}),
		protoactor.WithDeadLetterRequestLogging(false),
	)
	s.ProcessRegistry.Address = e.identity
	s.EventStream.Subscribe(e.onDeadLetter)
	if e.transport != nil {
		rp := &remoteProcess{env: e}
		s.ProcessRegistry.RegisterAddressResolver(func(*protoactor.PID) (protoactor.Process, bool) {
			return rp, true
		})
	}
	e.mu.Lock()
	e.endpoints.Range(func(k, v any) bool {
		s.ProcessRegistry.Add(v.(*cell), k.(string))
		return true
	})
	e.system.Store(s)
	e.mu.Unlock()
	if e.sysClosed {
		s.Shutdown()
	}
	return s
}

// localProcess returns the protoactor process registered under id, when
// the env has an actor system.
func (e *Env) localProcess(id string) (protoactor.Process, bool) {
	if s := e.system.Load(); s != nil {
		return s.ProcessRegistry.GetLocal(id)
	}
	return nil, false
}

// onDeadLetter accounts for messages that reached no process.
func (e *Env) onDeadLetter(ev any) {
	dl, ok := ev.(*protoactor.DeadLetterEvent)
	if !ok || dl.PID == nil {
		return
	}
	switch m := dl.Message.(type) {
	case *Future:
		m.complete(nil, &EndpointNotFoundError{Name: dl.PID.Id})
	case proto.Message:
		if isFutureID(dl.PID.Id) {
			e.log.Debug().Str("to", dl.PID.Id).Msg("Ignored a reply to an ask that has completed")
			return
		}
		if dl.Sender == nil {
			e.dropped(dl.PID.Id, m)
		}
	}
}

// quietHandler lowers protoactor's info messages to debug: they describe its
// internals, not the application.
type quietHandler struct{ slog.Handler }

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelWarn {
		l -= 4
	}
	return h.Handler.Enabled(ctx, l)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		r.Level -= 4
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
