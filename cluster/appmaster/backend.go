package appmaster

// This file holds the driver's link to its application master: the
// endpoints.ClusterManager that asks the AM for executors, kills them, and
// learns why they were lost (Spark's YarnSchedulerBackend).

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// SchedulerBackend is the driver's link to its application master, its
// endpoints.ClusterManager (Spark's YarnSchedulerBackend), in cluster mode
// and in client mode: it asks the AM's endpoint for executors,
// to kill them (and replace them), and why they were lost; told that an
// executor was lost, it asks the AM why (GetExecutorLossReason) and logs
// it. Until the AM's reference is known its calls fail with
// cluster.ErrNoClusterManager. It is also the application's
// cluster.ExecutorControl.
type SchedulerBackend struct {
	ctx context.Context
	am  atomic.Pointer[actor.Ref]
	log zerolog.Logger
}

// NewSchedulerBackend returns the backend of a driver whose application
// master's endpoint is am (nil until SetAM tells it); ctx bounds its asks.
func NewSchedulerBackend(ctx context.Context, am *actor.Ref, log zerolog.Logger) *SchedulerBackend {
	l := &SchedulerBackend{ctx: ctx, log: log}
	if am != nil {
		l.am.Store(am)
	}
	return l
}

// SetAM tells the backend its application master's endpoint (client mode:
// once the AM has registered).
func (l *SchedulerBackend) SetAM(am *actor.Ref) { l.am.Store(am) }

func (l *SchedulerBackend) amRef() (*actor.Ref, error) {
	am := l.am.Load()
	if am == nil {
		return nil, cluster.ErrNoClusterManager
	}
	return am, nil
}

// RequestTotalExecutors implements endpoints.ClusterManager.
func (l *SchedulerBackend) RequestTotalExecutors(ctx context.Context, total int) error {
	am, err := l.amRef()
	if err != nil {
		return err
	}
	_, err = actor.AskAs[*messages.AmBoolResponse](ctx, am, &messages.AmRequestExecutors{Total: int32(total)})
	return err
}

// KillExecutors implements endpoints.ClusterManager: the AM releases the
// executors' containers and lowers its target.
func (l *SchedulerBackend) KillExecutors(ctx context.Context, ids []string) error {
	am, err := l.amRef()
	if err != nil {
		return err
	}
	_, err = actor.AskAs[*messages.AmBoolResponse](ctx, am, &messages.AmKillExecutors{ExecutorIds: ids})
	return err
}

// KillAndReplaceExecutors implements endpoints.ClusterManager: the AM
// releases the executors' containers (their node managers stop the whole
// process group) and starts as many executors in their place.
func (l *SchedulerBackend) KillAndReplaceExecutors(ctx context.Context, ids []string) error {
	am, err := l.amRef()
	if err != nil {
		return err
	}
	_, err = actor.AskAs[*messages.AmBoolResponse](ctx, am, &messages.AmKillExecutors{ExecutorIds: ids, Replace: true})
	return err
}

// ExecutorLossReason implements endpoints.ClusterManager: the AM answers
// once the executor's container has completed, with its exit status; for an
// executor it never ran, the reason is empty.
func (l *SchedulerBackend) ExecutorLossReason(ctx context.Context, id string) (string, error) {
	am, err := l.amRef()
	if err != nil {
		return "", err
	}
	r, err := actor.AskAs[*messages.AmExecutorLossReason](ctx, am, &messages.AmGetExecutorLossReason{ExecutorId: id})
	if err != nil || !r.GetKnown() {
		return "", err
	}
	return r.GetMessage(), nil
}

// ExecutorLost implements endpoints.ExecutorAllocator.
func (l *SchedulerBackend) ExecutorLost(id, reason string) {
	am := l.am.Load()
	if am == nil {
		l.log.Info().Str("executor", id).Str("reason", reason).Msg("executor lost")
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(l.ctx, 30*time.Second)
		defer cancel()
		r, err := actor.AskAs[*messages.AmExecutorLossReason](ctx, am, &messages.AmGetExecutorLossReason{ExecutorId: id})
		if err != nil || !r.GetKnown() {
			l.log.Info().Str("executor", id).Str("reason", reason).Msg("executor lost")
			return
		}
		ev := l.log.Info() // a clean exit or the cluster's doing
		if r.GetExitCausedByApp() {
			ev = l.log.Warn()
		}
		ev.Str("executor", id).Int32("exitStatus", r.GetExitStatus()).Bool("exitCausedByApp", r.GetExitCausedByApp()).
			Msgf("Executor %s lost: %s", id, r.GetMessage())
	}()
}
