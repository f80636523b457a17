// The driver's cluster manager in the simulation: the application
// master's SchedulerBackend, its calls taken one step at a time.

package sim

import (
	"context"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
)

// sequencedCM is the cluster manager the simulator gives the driver
// (endpoints.WithClusterManager, the seam): the application master's
// SchedulerBackend, unchanged. The driver calls it from goroutines of its
// own (a lost executor's loss reason, an executor killed and replaced), and
// the backend asks the AM from another one for every executor lost; two of
// them woken by one step would send to the AM on one connection in the Go
// scheduler's order. Here each call first waits for its turn (World.turn):
// the calls of one step go on one at a time, in the order of their keys.
type sequencedCM struct {
	w     *World
	inner *appmaster.SchedulerBackend
}

// RequestTotalExecutors implements endpoints.ClusterManager.
func (s *sequencedCM) RequestTotalExecutors(ctx context.Context, total int) error {
	s.w.turn("cm request-total")
	return s.inner.RequestTotalExecutors(ctx, total)
}

// KillExecutors implements endpoints.ClusterManager.
func (s *sequencedCM) KillExecutors(ctx context.Context, ids []string) error {
	s.w.turn("cm kill " + strings.Join(ids, ","))
	return s.inner.KillExecutors(ctx, ids)
}

// KillAndReplaceExecutors implements endpoints.ClusterManager.
func (s *sequencedCM) KillAndReplaceExecutors(ctx context.Context, ids []string) error {
	s.w.turn("cm kill-and-replace " + strings.Join(ids, ","))
	return s.inner.KillAndReplaceExecutors(ctx, ids)
}

// ExecutorLossReason implements endpoints.ClusterManager.
func (s *sequencedCM) ExecutorLossReason(ctx context.Context, id string) (string, error) {
	s.w.turn("cm loss-reason " + id)
	return s.inner.ExecutorLossReason(ctx, id)
}

// ExecutorLost implements endpoints.ExecutorAllocator. It is called on the
// listener bus's goroutine, and the backend asks the AM on a goroutine of
// its own; so does this, after its turn.
func (s *sequencedCM) ExecutorLost(id, reason string) {
	go func() {
		s.w.turn("cm lost " + id)
		s.inner.ExecutorLost(id, reason)
	}()
}
