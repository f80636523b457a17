package endpoints

// This file holds the CoarseGrainedScheduler endpoint: the driver's typed
// message handlers.

import (
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// driverEndpoint is the CoarseGrainedScheduler endpoint: serial, on a loop
// of its own (Spark's IsolatedThreadSafeRpcEndpoint).
type driverEndpoint struct {
	d *Driver
}

// ThreadCount makes the endpoint serial on a dedicated goroutine.
func (e *driverEndpoint) ThreadCount() int { return 1 }

// OnStart revives offers every spark.scheduler.revive.interval, so that
// tasks are offered even when no event triggers it.
func (e *driverEndpoint) OnStart(ctx *actor.Context) error {
	if every := e.d.reviveInterval; every > 0 {
		if _, err := ctx.SendEvery(every, &messages.ReviveOffers{}); err != nil {
			return err
		}
	}
	return nil
}

func (e *driverEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	d := e.d
	switch m := msg.(type) {
	case *messages.StatusUpdate:
		d.statusUpdate(m)
	case *messages.ReviveOffers:
		var out offerResult
		d.mu.Lock()
		d.makeOffers(nil, &out)
		d.publish(&out)
		d.mu.Unlock()
		d.sendLaunches(out.launches)
		d.sendKills(out.kills)
	case *messages.LaunchedExecutor:
		d.launched(m.GetExecutorId())
	case *messages.KillTask:
		d.mu.Lock()
		ex := d.executors[m.GetExecutorId()]
		d.mu.Unlock()
		if ex == nil {
			d.log.Warn().Int64("tid", m.GetTaskId()).Str("executor", m.GetExecutorId()).
				Msg("Attempted to kill task for unknown executor")
			return nil
		}
		return ex.ref.Send(m)
	case *messages.RemoveExecutor:
		d.removeExecutor(m.GetExecutorId(), m.GetReason())
	case *messages.StopExecutors:
		d.stopExecutors()
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (e *driverEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	d := e.d
	switch m := msg.(type) {
	case *messages.RetrieveSparkAppConfig:
		props := d.env.Conf().All()
		for k := range props {
			if !strings.HasPrefix(k, "spark.") {
				delete(props, k)
			}
		}
		ctx.Reply(&messages.SparkAppConfig{SparkProperties: props, ResourceProfileId: m.GetResourceProfileId()})
	case *messages.RegisterExecutor:
		d.register(ctx, m)
	case *messages.StopExecutors:
		d.stopExecutors()
		ctx.Reply(&messages.BoolReply{Value: true})
	case *messages.StopDriver:
		ctx.Reply(&messages.BoolReply{Value: true})
		return ctx.Stop()
	case *messages.ExecutorDecommissioning:
		d.mu.Lock()
		ex := d.executors[m.GetExecutorId()]
		if ex != nil {
			ex.decommissioning = true
			d.notifyChanged()
		}
		d.mu.Unlock()
		if ex != nil {
			d.log.Info().Str("executor", ex.id).Msg("executor is decommissioning; it gets no new tasks")
		}
		ctx.Reply(&messages.BoolReply{Value: ex != nil})
	case *messages.RemoveExecutor:
		d.removeExecutor(m.GetExecutorId(), m.GetReason())
		ctx.Reply(&messages.BoolReply{Value: true})
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (e *driverEndpoint) OnDisconnected(_ *actor.Context, addr actor.RpcAddress) error {
	d := e.d
	d.mu.Lock()
	id, ok := d.byAddr[addr]
	d.mu.Unlock()
	switch {
	case !ok:
	case d.cm != nil:
		d.disableExecutor(id)
	default:
		d.removeExecutor(id, ReasonDisassociated)
	}
	return nil
}

func (e *driverEndpoint) OnError(_ *actor.Context, err error) {
	e.d.log.Error().Err(err).Msg("driver endpoint error")
}
