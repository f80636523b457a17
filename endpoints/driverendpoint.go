package endpoints

// This file holds the CoarseGrainedScheduler endpoint: the driver's typed
// message handlers.

import (
	"errors"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// driverEndpoint is the CoarseGrainedScheduler endpoint: serial, on a loop
// of its own (Spark's IsolatedThreadSafeRpcEndpoint). Its Router holds one
// handler per message; a message of another type fails its asker with
// "Unsupported message".
type driverEndpoint struct {
	*actor.Router
	d *Driver
}

func newDriverEndpoint(d *Driver) *driverEndpoint {
	e := &driverEndpoint{Router: actor.NewRouter(), d: d}
	r := e.Router
	// One-way messages (Spark's receive).
	actor.Handle(r, func(ctx *actor.Context, m *messages.StatusUpdate) error {
		d.statusUpdate(m, ctx.Peer())
		return nil
	})
	actor.Handle(r, func(*actor.Context, *messages.ReviveOffers) error {
		d.reviveOffers()
		return nil
	})
	actor.Handle(r, func(ctx *actor.Context, m *messages.LaunchedExecutor) error {
		d.launched(m.GetExecutorId(), ctx.Peer())
		return nil
	})
	actor.Handle(r, e.killTask)
	actor.Handle(r, func(_ *actor.Context, m *messages.LoseExecutor) error {
		d.removeExecutor(m.GetExecutorId(), m.GetReason())
		return nil
	})
	actor.Handle(r, func(*actor.Context, *messages.StopExecutors) error {
		d.stopExecutors()
		return nil
	})
	actor.Handle(r, func(_ *actor.Context, m *messages.KillExecutorsOnHost) error {
		d.killExecutorsOnHost(m.GetHost())
		return nil
	})
	// Asks (Spark's receiveAndReply).
	actor.HandleAsk(r, e.retrieveSparkAppConfig)
	actor.HandleAsk(r, d.register)
	actor.HandleAsk(r, func(*actor.CallContext, *messages.StopExecutors) (*messages.BoolReply, error) {
		d.stopExecutors()
		return &messages.BoolReply{Value: true}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, _ *messages.StopDriver) (*messages.BoolReply, error) {
		// Stop does not wait: OnStop runs after this reply.
		if err := ctx.Stop(); err != nil {
			return nil, err
		}
		return &messages.BoolReply{Value: true}, nil
	})
	actor.HandleAsk(r, e.executorDecommissioning)
	actor.HandleAsk(r, func(_ *actor.CallContext, m *messages.IsExecutorAlive) (*messages.BoolReply, error) {
		return &messages.BoolReply{Value: d.isExecutorAlive(m.GetExecutorId())}, nil
	})
	actor.HandleAsk(r, func(cc *actor.CallContext, m *messages.RemoveExecutor) (*messages.BoolReply, error) {
		if err := d.askerIs(cc, m.GetExecutorId()); err != nil {
			return nil, err
		}
		d.removeExecutor(m.GetExecutorId(), m.GetReason())
		return &messages.BoolReply{Value: true}, nil
	})
	return e
}

// driverOnly are the messages the driver's own parts send its endpoint,
// which it takes from no other env: orders that stop the driver or its
// executors, remove an executor without an ask, kill a host's executors, or
// kill a task.
var driverOnly = map[protoreflect.FullName]bool{
	proto.MessageName(&messages.LoseExecutor{}):        true,
	proto.MessageName(&messages.StopExecutors{}):       true,
	proto.MessageName(&messages.StopDriver{}):          true,
	proto.MessageName(&messages.KillTask{}):            true,
	proto.MessageName(&messages.KillExecutorsOnHost{}): true,
}

// Accepts takes from other envs what executors send the driver, and none
// of driverOnly (actor.Acceptor).
func (e *driverEndpoint) Accepts(name protoreflect.FullName) bool {
	return e.Handles(name) && !driverOnly[name]
}

// PeerAware makes Context.Peer say which env each one-way message came
// from: an executor's LaunchedExecutor and StatusUpdate count only from the
// env it registered from.
func (e *driverEndpoint) PeerAware() bool { return true }

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

// OnStop ends the jobs still running: the endpoint stops with Driver.Stop,
// which has ended them already, or with its env, which no job survives.
// In the second case it also releases what Stop would have: the listener
// bus's goroutine, the background context and the scheduler's metrics in
// the env's registry.
func (e *driverEndpoint) OnStop(*actor.Context) error {
	e.d.endJobs()
	if !e.d.stopCalled.Load() {
		e.d.release()
	}
	return nil
}

// killTask forwards a KillTask to the executor that runs the task.
func (e *driverEndpoint) killTask(_ *actor.Context, m *messages.KillTask) error {
	d := e.d
	d.mu.Lock()
	ex := d.executors[m.GetExecutorId()]
	d.mu.Unlock()
	if ex == nil {
		d.log.Warn().Int64("tid", m.GetTaskId()).Str("executor", m.GetExecutorId()).
			Msg("Attempted to kill task for unknown executor")
		return nil
	}
	return ex.ref.Send(m)
}

// isSecretKey reports whether key says where the driver's secret comes
// from (spark.authenticate.secret, .secret.file, .keyId): an executor has
// its own, handed to it by its node manager, and the driver's never leaves
// its process.
func isSecretKey(key string) bool {
	return key == "spark.authenticate.secret" || key == "spark.authenticate.secret.file" || key == "spark.authenticate.keyId"
}

// retrieveSparkAppConfig answers an executor's config fetcher with the
// application's spark.* properties, but those of its secret.
func (e *driverEndpoint) retrieveSparkAppConfig(_ *actor.CallContext, m *messages.RetrieveSparkAppConfig) (*messages.SparkAppConfig, error) {
	props := e.d.env.Conf().All()
	for k := range props {
		if !strings.HasPrefix(k, "spark.") || isSecretKey(k) {
			delete(props, k)
		}
	}
	return &messages.SparkAppConfig{SparkProperties: props, ResourceProfileId: m.GetResourceProfileId()}, nil
}

// executorDecommissioning stops offering the executor tasks; it answers
// whether the executor is known.
func (e *driverEndpoint) executorDecommissioning(cc *actor.CallContext, m *messages.ExecutorDecommissioning) (*messages.BoolReply, error) {
	d := e.d
	if err := d.askerIs(cc, m.GetExecutorId()); err != nil {
		return nil, err
	}
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
	return &messages.BoolReply{Value: ex != nil}, nil
}

// OnDisconnected removes the executors whose connection closed (every one
// registered from it), or, with a cluster manager, disables them until the
// cluster manager says why they left.
func (e *driverEndpoint) OnDisconnected(_ *actor.Context, addr actor.RpcAddress) error {
	d := e.d
	for _, id := range d.executorsWhere(func(ex *executorData) bool { return ex.addr == addr }) {
		if d.cm != nil {
			d.disableExecutor(id)
		} else {
			d.removeExecutor(id, ReasonDisassociated)
		}
	}
	return nil
}

// OnError logs the errors of the handlers.
func (e *driverEndpoint) OnError(_ *actor.Context, err error) {
	var refused *registrationError
	if errors.As(err, &refused) {
		return // register logged the refusal, at warn level as Spark does
	}
	e.d.log.Error().Err(err).Msg("driver endpoint error")
}
