package executorpods

// refusals.go is how the allocator meets failed API requests, by cause
// (kubeclient's classification): RBAC, credentials, a missing namespace or
// an invalid pod end the application; the cluster's policy refusing a pod
// (an exceeded ResourceQuota, PodSecurity, a LimitRange, a webhook) is
// back-pressure, retried with backoff while the application goes on with
// the executors it has; transient failures are retried with backoff. A
// failed deletion is asked for again, with backoff.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ErrExecutorsRefused is matched by the allocator's error when the
// cluster's policy (a quota, an admission check) refused every executor
// pod for longer than spark.kubernetes.allocation.executor.timeout while
// no executor ran.
var ErrExecutorsRefused = errors.New("kubernetes: executor pods refused")

// refusalReportEvery bounds how often the same refusal is logged.
const refusalReportEvery = 30 * time.Second

// fatalCreateError reports whether a failed creation ends the application:
// the request itself is wrong or not allowed (RBAC), not the moment.
func fatalCreateError(err error) bool {
	if kubeclient.BackPressure(err) || kubeclient.Retryable(err) {
		return false
	}
	return errors.Is(err, kubeclient.ErrUnauthorized) || errors.Is(err, kubeclient.ErrForbidden) ||
		errors.Is(err, kubeclient.ErrNamespaceNotFound) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// uncreate forgets the executors ids of a batch whose creation failed at
// ids[0]: none stays counted as created, and the next batch starts again
// at ids[0] (a pod that the failed request did create is then found
// already there).
func (a *Allocator) uncreate(ids []int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		delete(a.created, id)
	}
	if len(ids) > 0 && a.nextID > ids[0] {
		a.nextID = ids[0]
	}
}

// createSucceeded ends the backoff of creations and any refusal.
func (a *Allocator) createSucceeded() {
	a.mu.Lock()
	a.createFailures, a.createAfter, a.refusedSince, a.refusedBy = 0, time.Time{}, time.Time{}, ""
	a.mu.Unlock()
}

// createFailed handles the failed creation of pod name (err classified):
// a fatal error fails the application; otherwise creation waits for a
// backoff, and a refusal by the cluster's policy is logged (at most every
// refusalReportEvery for the same message) and reported.
func (a *Allocator) createFailed(err error, name string) {
	if fatalCreateError(err) {
		a.fail(err)
		return
	}
	now := time.Now()
	refused := kubeclient.BackPressure(err)
	a.mu.Lock()
	a.createFailures++
	delay := backoffDelay(a.createFailures, a.cfg.BatchDelay, rand.Float64())
	a.createAfter = now.Add(delay)
	line := ""
	if refused {
		why := refusalText(err)
		if a.refusedSince.IsZero() {
			a.refusedSince = now
		}
		a.refusedBy = why
		if why != a.lastRefusal || now.Sub(a.refusalAt) > refusalReportEvery {
			a.lastRefusal, a.refusalAt = why, now
			line = fmt.Sprintf("Cannot create executor pods for now: %s; retrying with backoff (next in %s) with %d executors running; "+
				"with none running, the application fails after %s of refusals (%s)",
				why, delay.Round(time.Millisecond), a.runningLocked(), a.cfg.ExecutorTimeout, kubeconf.KeyExecutorTimeout)
		}
	}
	a.mu.Unlock()
	if !refused {
		a.log.Warn().Err(err).Str("pod", name).Dur("retryIn", delay).Msg("cannot create an executor pod; retrying with backoff")
		return
	}
	if line != "" {
		a.log.Warn().Str("pod", name).Msg(line)
		if a.opts.Report != nil {
			a.opts.Report(line)
		}
	}
}

// refusalText says which policy refused a pod, and its message.
func refusalText(err error) string {
	var ae *kubeclient.APIError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	if ae.Quota != "" {
		return fmt.Sprintf("ResourceQuota %q is used up: %s", ae.Quota, ae.Message)
	}
	return "admission refused: " + ae.Message
}

// deleteFailedLocked schedules the deletion of executor id's pod again, after a
// backoff; a.mu is held.
func (a *Allocator) deleteFailedLocked(id int64, now time.Time) time.Duration {
	delete(a.deleting, id)
	a.deleteFailures[id]++
	d := backoffDelay(a.deleteFailures[id], a.cfg.BatchDelay, rand.Float64())
	a.deleteAfter[id] = now.Add(d)
	return d
}

// runningLocked counts the executor pods running; a.mu is held.
func (a *Allocator) runningLocked() int {
	n := 0
	for id, st := range a.pods {
		if st.Phase == podRunning && !a.deleting[id] {
			n++
		}
	}
	return n
}
