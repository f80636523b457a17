package endpoints

// This file holds both ends of heartbeats: the driver's HeartbeatReceiver
// endpoint, which expires silent executors, and the executor's heartbeat loop.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// heartbeatReceiver is the driver's HeartbeatReceiver endpoint: it tracks
// when each executor was last heard from and removes the executors that
// stayed silent longer than the timeout; with a cluster manager, it also has
// their containers killed and replaced (Spark's expireDeadHosts).
type heartbeatReceiver struct {
	*actor.Router
	d        *Driver
	timeout  time.Duration
	interval time.Duration
	lastSeen map[string]time.Time
}

func newHeartbeatReceiver(timeout, interval time.Duration) *heartbeatReceiver {
	h := &heartbeatReceiver{Router: actor.NewRouter(), timeout: timeout, interval: interval, lastSeen: make(map[string]time.Time)}
	r := h.Router
	// One-way messages: from the driver endpoint and from its own timer
	// (Accepts takes none of them from other envs).
	actor.Handle(r, func(_ *actor.Context, m *messages.ExecutorRegistered) error {
		now := time.Now()
		h.lastSeen[m.GetExecutorId()] = now
		h.d.hbTimes.set(m.GetExecutorId(), now)
		return nil
	})
	actor.Handle(r, func(_ *actor.Context, m *messages.ExecutorRemoved) error {
		delete(h.lastSeen, m.GetExecutorId())
		h.d.hbTimes.remove(m.GetExecutorId())
		return nil
	})
	actor.Handle(r, func(*actor.Context, *messages.ExpireDeadHosts) error {
		h.expireDeadHosts()
		return nil
	})
	// Asks: the executors' heartbeats, each from the executor it names, and
	// an expiry on demand.
	actor.HandleAsk(r, func(cc *actor.CallContext, m *messages.Heartbeat) (*messages.HeartbeatResponse, error) {
		if err := h.d.askerIs(cc, m.GetExecutorId()); err != nil {
			return nil, err
		}
		return &messages.HeartbeatResponse{ReregisterBlockManager: !h.heartbeat(m)}, nil
	})
	actor.HandleAsk(r, func(*actor.CallContext, *messages.ExpireDeadHosts) (*messages.BoolReply, error) {
		h.expireDeadHosts()
		return &messages.BoolReply{Value: true}, nil
	})
	return h
}

// Accepts takes the executors' heartbeats from other envs, and nothing
// else: the driver's notices of executors coming and going, and the
// expiry, come from this env (actor.Acceptor).
func (h *heartbeatReceiver) Accepts(name protoreflect.FullName) bool {
	return name == proto.MessageName(&messages.Heartbeat{})
}

// heartbeatTimeout is spark.storage.blockManagerHeartbeatTimeoutMs, else
// spark.network.timeout, else 120s.
func heartbeatTimeout(conf *actor.Conf) (time.Duration, error) {
	if conf.Contains(KeyHeartbeatTimeout) {
		return conf.GetDuration(KeyHeartbeatTimeout, "", time.Millisecond)
	}
	return conf.GetDuration(actor.KeyNetworkTimeout, "120s", time.Second)
}

// checkHeartbeatInterval refuses an executor heartbeat interval that is
// not below timeout, the driver's heartbeat timeout: every executor would
// be taken for lost between two of its heartbeats (Spark's
// SparkConf.validateSettings).
func checkHeartbeatInterval(conf *actor.Conf, timeout time.Duration) error {
	interval, err := conf.GetDuration(KeyHeartbeatInterval, "10s", time.Millisecond)
	if err != nil {
		return err
	}
	if interval < timeout {
		return nil
	}
	timeoutKey := actor.KeyNetworkTimeout
	if conf.Contains(KeyHeartbeatTimeout) {
		timeoutKey = KeyHeartbeatTimeout
	}
	return fmt.Errorf("%w: the value of %s (%s) must be greater than the value of %s (%s)",
		ErrInvalidConfig, timeoutKey, timeout, KeyHeartbeatInterval, interval)
}

// OnStart checks for silent executors every spark.network.timeoutInterval.
func (h *heartbeatReceiver) OnStart(ctx *actor.Context) error {
	_, err := ctx.SendEvery(h.interval, &messages.ExpireDeadHosts{})
	return err
}

// heartbeat records a heartbeat and reports whether the executor is known.
func (h *heartbeatReceiver) heartbeat(m *messages.Heartbeat) bool {
	id := m.GetExecutorId()
	if _, ok := h.lastSeen[id]; !ok {
		h.d.log.Debug().Str("executor", id).Msg("heartbeat from an unknown executor")
		return false
	}
	now := time.Now()
	h.lastSeen[id] = now
	h.d.hbTimes.set(id, now)
	return true
}

func (h *heartbeatReceiver) expireDeadHosts() {
	now := time.Now()
	// In the order of their ids, not the map's: executors that expire in
	// one check are removed in the same order every time.
	for _, id := range slices.Sorted(maps.Keys(h.lastSeen)) {
		silent := now.Sub(h.lastSeen[id])
		if silent <= h.timeout {
			continue
		}
		reason := fmt.Sprintf("Executor heartbeat timed out after %d ms", silent.Milliseconds())
		h.d.log.Warn().Str("executor", id).Str("reason", reason).Msg("Removing executor with no recent heartbeats")
		delete(h.lastSeen, id)
		h.d.hbTimes.remove(id)
		// As Spark: the executor's process may hang (stopped, deadlocked,
		// swapping) with its container still holding its resources, so ask
		// for it to be killed and replaced, and remove it at once so that
		// its tasks run elsewhere.
		h.d.killAndReplace(id, reason)
		_ = h.d.ref.Send(&messages.LoseExecutor{ExecutorId: id, Reason: reason})
	}
}

// OnError logs the errors of the handlers.
func (h *heartbeatReceiver) OnError(_ *actor.Context, err error) {
	h.d.log.Error().Err(err).Msg("heartbeat receiver error")
}

// heartbeat asks the driver's HeartbeatReceiver every heartbeat interval;
// after spark.executor.heartbeat.maxFailures failures in a row the executor
// exits with ExitCodeHeartbeatFailure.
func (b *executorBackend) heartbeat(receiver *actor.Ref, r *taskRunner) {
	t := time.NewTicker(b.hbInterval)
	defer t.Stop()
	timeout := actor.RpcTimeout{Duration: b.hbInterval, Key: KeyHeartbeatInterval}
	failures := 0
	for {
		select {
		case <-b.hbStop:
			return
		case <-t.C:
		}
		_, err := receiver.AskWithTimeout(b.ctx, &messages.Heartbeat{ExecutorId: b.cfg.ExecutorID, RunningTasks: int32(r.numBusy())}, timeout).Result()
		if err == nil {
			failures = 0
			continue
		}
		if errors.Is(err, context.Canceled) || b.stopping.Load() {
			return
		}
		failures++
		b.log.Warn().Err(err).Int("failures", failures).Msg("Issue communicating with driver in heartbeater")
		if failures >= b.hbMaxFailures {
			b.exitExecutor(ExitCodeHeartbeatFailure,
				fmt.Sprintf("Unable to send heartbeats to driver more than %d times", b.hbMaxFailures), err, true)
			return
		}
	}
}
