package executorpods

// allocatorcm.go is the allocator's side facing the driver: the
// endpoints.ClusterManager methods through which the scheduler backend asks
// for a number of executors, kills or replaces them, and learns why one
// was lost.

import (
	"context"
	"errors"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequestTotalExecutors implements endpoints.ClusterManager.
func (a *Allocator) RequestTotalExecutors(ctx context.Context, total int) error {
	a.mu.Lock()
	a.target = max(0, total)
	a.mu.Unlock()
	a.poke()
	return nil
}

// KillExecutors implements endpoints.ClusterManager: it deletes the
// executors' pods and wants as many executors fewer. A deletion that fails
// is returned, and retried by the allocation rounds.
func (a *Allocator) KillExecutors(ctx context.Context, ids []string) error {
	return a.kill(ctx, ids, false)
}

// KillAndReplaceExecutors implements endpoints.ClusterManager: it deletes
// the executors' pods; as many new pods replace them.
func (a *Allocator) KillAndReplaceExecutors(ctx context.Context, ids []string) error {
	return a.kill(ctx, ids, true)
}

func (a *Allocator) kill(ctx context.Context, ids []string, replace bool) error {
	var pods []podDeletion
	a.mu.Lock()
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		st, ok := a.pods[id]
		if !ok || a.killed[id] {
			continue
		}
		a.killed[id] = true
		a.deleting[id] = true
		if !replace {
			a.target = max(0, a.target-1)
		}
		pods = append(pods, podDeletion{ID: id, Name: st.Name})
	}
	a.mu.Unlock()
	var errs []error
	for _, p := range pods {
		dctx, cancel := context.WithTimeout(ctx, a.client.Timeout)
		err := a.client.CoreV1().Pods(a.cfg.Namespace).Delete(dctx, p.Name, metav1.DeleteOptions{})
		cancel()
		if err != nil && !apierrors.IsNotFound(err) {
			// The allocation rounds delete it again, after a backoff.
			a.mu.Lock()
			a.deleteFailedLocked(p.ID, time.Now())
			a.mu.Unlock()
			errs = append(errs, a.client.APIError(err, "delete", "pods/"+p.Name, a.cfg.Namespace))
		}
	}
	a.poke()
	return errors.Join(errs...)
}

// ExecutorLossReason implements endpoints.ClusterManager: the reason is
// given once the executor's pod has ended (it waits for that, within ctx);
// an executor without a pod has no reason.
func (a *Allocator) ExecutorLossReason(ctx context.Context, id string) (string, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return "", nil
	}
	a.mu.Lock()
	if r, ok := a.reasons.Get(n); ok {
		a.mu.Unlock()
		return r, nil
	}
	if _, ok := a.pods[n]; !ok {
		if _, ok := a.created[n]; !ok {
			a.mu.Unlock()
			return "", nil
		}
	}
	ch := make(chan string, 1)
	a.waiters[n] = append(a.waiters[n], ch)
	a.mu.Unlock()
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
