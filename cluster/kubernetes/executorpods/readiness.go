package executorpods

// readiness.go is the allocator's wait for the driver pod at application
// start (Spark's ExecutorPodsAllocator.start with
// spark.kubernetes.allocation.driver.readinessTimeout): executor pods are
// created only once the driver pod is Ready, so that its headless service
// resolves when they connect; a driver pod that does not get Ready in time
// is logged and allocation goes on.

import (
	"context"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolswatch "k8s.io/client-go/tools/watch"
)

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// awaitDriverReady waits until the driver pod name is Ready, at most
// spark.kubernetes.allocation.driver.readinessTimeout. A timeout, or an
// API error, is logged as a warning and allocation goes on, as in Spark;
// it returns early only when ctx ends.
func (a *Allocator) awaitDriverReady(ctx context.Context, name string) {
	ns := a.cfg.Namespace
	timeout := a.cfg.DriverReadinessTimeout
	start := time.Now()
	a.log.Info().Str("pod", name).Dur("timeout", timeout).
		Msgf("Waiting up to %s for driver pod %s:%s to be ready before requesting executors", timeout, ns, name)
	lw := kubeclient.NamedPodListWatch(a.client.CoreV1().Pods(ns), name)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := toolswatch.UntilWithSync(wctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		return ok && ev.Type != watch.Deleted && podReady(p), nil
	})
	switch {
	case err == nil:
		a.log.Info().Str("pod", name).Dur("waited", time.Since(start)).Msgf("Driver pod %s:%s is ready", ns, name)
	case ctx.Err() != nil:
	case wctx.Err() != nil:
		a.log.Warn().Str("pod", name).Msgf("Driver pod %s:%s is not ready after %s (%s); requesting executors anyway",
			ns, name, timeout, kubeconf.KeyDriverReadinessTimeout)
	default:
		a.log.Warn().Err(a.client.APIError(err, "watch", "pods/"+name, ns)).Str("pod", name).
			Msg("cannot wait for the driver pod to be ready; requesting executors anyway")
	}
}
