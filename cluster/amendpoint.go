package cluster

// This file holds the application master's endpoint (Spark's AMEndpoint),
// which the driver asks for executors and for why executors were lost.

import (
	"errors"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// amEndpoint is the AM's endpoint (Spark's AMEndpoint).
type amEndpoint struct {
	log        zerolog.Logger
	alloc      atomic.Pointer[allocator]
	driverAddr actor.RpcAddress
	finished   chan *messages.AmDriverFinished
}

func (e *amEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	switch m := msg.(type) {
	case *messages.AmDriverFinished:
		if e.finished != nil {
			select {
			case e.finished <- m:
			default:
			}
		}
		return nil
	}
	return actor.ErrUnsupportedMessage
}

func (e *amEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	a := e.alloc.Load()
	switch m := msg.(type) {
	case *messages.AmRequestExecutors:
		if a == nil {
			return errors.New("the application master has not registered yet")
		}
		a.requestTotal(int(m.GetTotal()))
		ctx.Reply(&messages.AmBoolResponse{Ok: true})
	case *messages.AmKillExecutors:
		if a == nil {
			return errors.New("the application master has not registered yet")
		}
		a.kill(m.GetExecutorIds(), m.GetReplace())
		ctx.Reply(&messages.AmBoolResponse{Ok: true})
	case *messages.AmGetExecutorLossReason:
		if a == nil {
			ctx.Reply(&messages.AmExecutorLossReason{ExecutorId: m.GetExecutorId()})
			return nil
		}
		id := m.GetExecutorId()
		a.lossReason(id, func(r lossReason, known bool) {
			ctx.Reply(&messages.AmExecutorLossReason{ExecutorId: id, Known: known, ExitStatus: r.exitStatus,
				Message: r.message, ExitCausedByApp: r.causedByApp})
		})
	case *messages.AmDriverFinished:
		_ = e.Receive(ctx.Context, m)
		ctx.Reply(&messages.AmBoolResponse{Ok: true})
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

// OnDisconnected ends a client-mode AM when its driver goes away.
func (e *amEndpoint) OnDisconnected(ctx *actor.Context, addr actor.RpcAddress) error {
	if e.finished != nil && addr == e.driverAddr {
		e.log.Info().Str("driver", addr.String()).Msg("Driver terminated or disconnected! Shutting down.")
		select {
		case e.finished <- &messages.AmDriverFinished{FinalStatus: messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED,
			Diagnostics: "Driver " + addr.String() + " disconnected"}:
		default:
		}
	}
	return nil
}
