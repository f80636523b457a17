package executorpods

// This file holds the allocator's calls on the API server for pods:
// creating a round's pods, deleting one, and deleting all of an
// application's when it ends.

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createPods creates the pods of executors ids, in order. At the first
// error it stops, and none of the pods not created stays counted as
// created: the application fails when the request cannot pass (401, an
// RBAC 403, missing namespace, invalid pod); otherwise creation resumes
// after a backoff (refusals.go).
func (a *Allocator) createPods(ctx context.Context, ids []int64) {
	for i, id := range ids {
		var logURL string
		if a.opts.ExecutorLogURL != nil {
			logURL = a.opts.ExecutorLogURL(id)
		}
		pod := Pod(a.cfg, id, a.driverURL, logURL, a.opts.Owner)
		cctx, cancel := context.WithTimeout(ctx, a.client.Timeout)
		_, err := a.client.CoreV1().Pods(a.cfg.Namespace).Create(cctx, pod, metav1.CreateOptions{})
		cancel()
		if err == nil || apierrors.IsAlreadyExists(err) {
			a.createSucceeded()
			continue
		}
		a.uncreate(ids[i:])
		if ctx.Err() != nil {
			return
		}
		a.createFailed(a.client.APIError(err, "create", "pods", a.cfg.Namespace), pod.Name)
		return
	}
}

// deletePod deletes executor id's pod name; a failed deletion is asked for
// again after a backoff.
func (a *Allocator) deletePod(ctx context.Context, id int64, name string) {
	dctx, cancel := context.WithTimeout(ctx, a.client.Timeout)
	defer cancel()
	err := a.client.CoreV1().Pods(a.cfg.Namespace).Delete(dctx, name, metav1.DeleteOptions{})
	if ctx.Err() != nil {
		return
	}
	a.mu.Lock()
	if err == nil || apierrors.IsNotFound(err) {
		delete(a.deleteFailures, id)
		delete(a.deleteAfter, id)
		a.mu.Unlock()
		return
	}
	d := a.deleteFailedLocked(id, time.Now())
	a.mu.Unlock()
	a.log.Warn().Err(a.client.APIError(err, "delete", "pods/"+name, a.cfg.Namespace)).Dur("retryIn", d).
		Msg("cannot delete an executor pod; retrying with backoff")
}

// deleteExecutorPods deletes an application's executor pods and waits until
// none is left. A deletion of the collection that fails transiently (the
// API server unreachable, a 5xx, a 429, a timeout) leaves the work to the
// loop that lists what is left and deletes each pod, until ctx ends.
func deleteExecutorPods(ctx context.Context, c *kubeclient.Client, namespace, appID string, log zerolog.Logger) error {
	sel := metav1.ListOptions{LabelSelector: Selector(appID)}
	pods := c.CoreV1().Pods(namespace)
	dctx, cancel := context.WithTimeout(ctx, c.Timeout)
	err := pods.DeleteCollection(dctx, metav1.DeleteOptions{}, sel)
	cancel()
	if err != nil {
		err = c.APIError(err, "deletecollection", "pods", namespace)
		if !kubeclient.Retryable(err) || ctx.Err() != nil {
			return err
		}
		log.Warn().Err(err).Msg("cannot delete the executor pods at once; deleting them one by one")
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, c.Timeout)
		l, err := pods.List(lctx, sel)
		cancel()
		if err == nil && len(l.Items) == 0 {
			return nil
		}
		if err == nil {
			// Pods created after the collection was deleted are deleted
			// now; pods whose container has ended have nothing left to
			// stop, so they need no grace period.
			for _, p := range l.Items {
				ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
				if p.DeletionTimestamp == nil || ended {
					opts := metav1.DeleteOptions{}
					if ended {
						zero := int64(0)
						opts.GracePeriodSeconds = &zero
					}
					dctx, cancel := context.WithTimeout(ctx, c.Timeout)
					_ = pods.Delete(dctx, p.Name, opts)
					cancel()
				}
			}
		}
		select {
		case <-ctx.Done():
			n := -1
			if l != nil {
				n = len(l.Items)
			}
			log.Warn().Int("left", n).Msg("executor pods still terminating")
			return ctx.Err()
		case <-t.C:
		}
	}
}
