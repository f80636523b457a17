package appmaster

// This file holds the application master's endpoint (Spark's AMEndpoint),
// which the driver asks for executors and for why executors were lost.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// amEndpoint is the AM's endpoint (Spark's AMEndpoint). Its Router holds a
// handler per message; the executors' loss reasons are answered apart,
// later, once their containers have completed.
type amEndpoint struct {
	*actor.Router
	log      zerolog.Logger
	alloc    atomic.Pointer[allocator]
	driver   *actor.Ref // client mode: the driver's endpoint, else nil
	finished chan *messages.AmDriverFinished
	// lost receives why a client-mode AM lost its driver, gone without
	// sending its end (AmDriverFinished).
	lost chan string
	// ctx ends with the AM: it bounds the checks of a driver whose
	// connection closed (OnDisconnected).
	ctx context.Context
}

// errAMNotRegistered fails the driver's requests that come before the AM
// registered with the resource manager.
var errAMNotRegistered = errors.New("the application master has not registered yet")

// newAMEndpoint returns the AM's endpoint. In client mode, driver is the
// driver's endpoint and finished receives the driver's end; ctx ends with
// the AM.
func newAMEndpoint(ctx context.Context, log zerolog.Logger, driver *actor.Ref, finished chan *messages.AmDriverFinished) *amEndpoint {
	e := &amEndpoint{Router: actor.NewRouter(), log: log, driver: driver, finished: finished, lost: make(chan string, 1), ctx: ctx}
	r := e.Router
	// Every message it takes is the driver's order: Receive and
	// ReceiveAndReply take them from the driver only (requireDriver).
	actor.Handle(r, func(_ *actor.Context, m *messages.AmDriverFinished) error {
		e.driverFinished(m)
		return nil
	})
	actor.HandleAsk(r, func(_ *actor.CallContext, m *messages.AmDriverFinished) (*messages.AmBoolResponse, error) {
		e.driverFinished(m)
		return &messages.AmBoolResponse{Ok: true}, nil
	})
	actor.HandleAsk(r, func(_ *actor.CallContext, m *messages.AmRequestExecutors) (*messages.AmBoolResponse, error) {
		a := e.alloc.Load()
		if a == nil {
			return nil, errAMNotRegistered
		}
		a.requestTotal(int(m.GetTotal()))
		return &messages.AmBoolResponse{Ok: true}, nil
	})
	actor.HandleAsk(r, func(_ *actor.CallContext, m *messages.AmKillExecutors) (*messages.AmBoolResponse, error) {
		a := e.alloc.Load()
		if a == nil {
			return nil, errAMNotRegistered
		}
		a.kill(m.GetExecutorIds(), m.GetReplace())
		return &messages.AmBoolResponse{Ok: true}, nil
	})
	return e
}

// requireDriver fails msg, a message the endpoint takes, from peer (the
// env it came from, "" for this one) that is not the driver's: in cluster
// mode the driver runs on this env; in client mode it is the env of the
// driver's endpoint. Any other env holding the application's key (its
// executors) may not steer the AM: kill another executor, change the
// target, or end the application. A message the endpoint does not take is
// left to the Router, which refuses it.
func (e *amEndpoint) requireDriver(peer string, msg proto.Message) error {
	name := proto.MessageName(msg)
	_, lossReason := msg.(*messages.AmGetExecutorLossReason)
	if !lossReason && !e.Handles(name) || peer == "" || e.driver != nil && peer == e.driver.PID().Address {
		return nil
	}
	return fmt.Errorf("%w: %s is taken from the application's driver only, not from %s", cluster.ErrPermissionDenied, name.Name(), peer)
}

// PeerAware makes Context.Peer say which env a one-way AmDriverFinished
// came from (requireDriver).
func (e *amEndpoint) PeerAware() bool { return true }

// Receive takes a client-mode driver's one-way AmDriverFinished, from the
// driver only.
func (e *amEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	if err := e.requireDriver(ctx.Peer(), msg); err != nil {
		e.log.Warn().Err(err).Msg("ignored")
		return nil
	}
	return e.Router.Receive(ctx, msg)
}

// ReceiveAndReply takes asks from the driver only; it answers
// AmGetExecutorLossReason itself, as the answer waits for the executor's
// container to complete, and the Router answers the rest.
func (e *amEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	if err := e.requireDriver(ctx.Peer(), msg); err != nil {
		return err
	}
	m, ok := msg.(*messages.AmGetExecutorLossReason)
	if !ok {
		return e.Router.ReceiveAndReply(ctx, msg)
	}
	id := m.GetExecutorId()
	a := e.alloc.Load()
	if a == nil {
		ctx.Reply(&messages.AmExecutorLossReason{ExecutorId: id})
		return nil
	}
	a.lossReason(id, func(r lossReason, known bool) {
		ctx.Reply(&messages.AmExecutorLossReason{ExecutorId: id, Known: known, ExitStatus: r.exitStatus,
			Message: r.message, ExitCausedByApp: r.causedByApp})
	})
	return nil
}

// driverFinished passes a client-mode driver's end to the launcher (a
// cluster-mode AM has no finished channel: its driver runs here).
func (e *amEndpoint) driverFinished(m *messages.AmDriverFinished) {
	if e.finished == nil {
		return
	}
	select {
	case e.finished <- m:
	default:
	}
}

// OnDisconnected ends a client-mode AM when its driver goes away. A closed
// connection alone does not say so: either side closes a connection that
// has been idle for spark.rpc.io.idleTimeout, and the driver sends its AM
// nothing while its executors stay as they are. So the AM looks the driver
// up again (which connects anew) and ends only when that fails.
func (e *amEndpoint) OnDisconnected(ctx *actor.Context, addr actor.RpcAddress) error {
	if e.finished == nil || e.driver == nil || addr != e.driver.Address() {
		return nil
	}
	env := ctx.Env()
	go func() {
		_, err := env.SetupEndpointRefByURI(e.ctx, e.driver.String())
		if err == nil {
			e.log.Info().Str("driver", addr.String()).Msg("Connection to the driver closed; the driver answers, going on")
			return
		}
		if e.ctx.Err() != nil {
			return // the AM is ending anyway
		}
		// A driver that ends tells the AM how the application ended
		// (AmDriverFinished) or has it killed: one that is gone without
		// that word died (a signal, the OOM killer), and its application
		// did not succeed (Spark's clientModeTreatDisconnectAsFailed).
		e.log.Error().Err(err).Str("driver", addr.String()).Msg("Application Master lost connection with driver! Shutting down.")
		select {
		case e.lost <- "Application Master lost connection with the driver at " + addr.String() + " without its word on how the application ended":
		default:
		}
	}()
	return nil
}
