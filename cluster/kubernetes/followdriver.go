// Following a cluster-mode driver pod until it ends.

package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolswatch "k8s.io/client-go/tools/watch"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
)

// errDriverDeleted ends followDriver's watch when the driver pod is deleted.
var errDriverDeleted = errors.New("driver pod deleted")

// followDriver watches the driver pod, prints its state changes (and every
// interval its state), and returns when it ends: nil when it succeeded.
// The watch's end, a deletion of the pod included, comes after every event
// the watch saw before it, so a pod that succeeded and was then deleted
// succeeded, and a deleted pod never looks like a watch that ended well.
func followDriver(ctx context.Context, cfg cluster.SubmitConfig, client *kubeclient.Client, ns, name string, interval time.Duration) error {
	f := &driverFollower{ctx: ctx, cfg: cfg, client: client, ns: ns, name: name}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	wctx, cancel := context.WithCancel(ctx)
	events, watchDone := f.watch(wctx)
	watching := true
	defer func() {
		cancel()
		if watching {
			<-watchDone
		}
	}()
	for {
		select {
		case p := <-events:
			if done, err := f.seen(p); done {
				return err
			}
		case err := <-watchDone:
			watching = false
			for len(events) > 0 { // what the watch saw before it ended
				if done, err := f.seen(<-events); done {
					return err
				}
			}
			return f.watchEnded(err)
		case <-tick.C:
			if f.last != nil {
				fmt.Fprintf(cfg.Stderr, "Application status for driver pod %s:%s (phase: %s)\n", ns, name, f.last.Status.Phase)
			}
		case <-ctx.Done():
			return f.keepsRunning()
		}
	}
}

// driverFollower is followDriver's view of the driver pod.
type driverFollower struct {
	ctx      context.Context
	cfg      cluster.SubmitConfig
	client   *kubeclient.Client
	ns, name string
	last     *corev1.Pod // the pod as last seen
	lastDesc string      // its state as last printed
}

// watch watches the driver pod until ctx ends or the pod is deleted. It
// sends each state of the pod on events, and then the watch's end on done
// (errDriverDeleted for a deletion).
func (f *driverFollower) watch(ctx context.Context) (events chan *corev1.Pod, done chan error) {
	lw := kubeclient.NamedPodListWatch(f.client.CoreV1().Pods(f.ns), f.name)
	events, done = make(chan *corev1.Pod, 16), make(chan error, 1)
	go func() {
		_, err := toolswatch.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
			if ev.Type == watch.Deleted {
				return true, errDriverDeleted
			}
			if p, ok := ev.Object.(*corev1.Pod); ok {
				select {
				case events <- p:
				case <-ctx.Done():
				}
			}
			return false, nil
		})
		done <- err
	}()
	return events, done
}

// seen prints p's state and reports whether the driver ended, and how.
func (f *driverFollower) seen(p *corev1.Pod) (bool, error) {
	f.last = p
	if d := describeDriver(p); d != f.lastDesc {
		f.lastDesc = d
		fmt.Fprintf(f.cfg.Stderr, "Application status for driver pod %s:%s: %s\n", f.ns, f.name, d)
	}
	if reason, image, msg := executorpods.StartFailure(p); reason != "" && p.Status.Phase == corev1.PodPending {
		return true, f.cannotStart(p, reason, image, msg)
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		fmt.Fprintf(f.cfg.Stderr, "Application %s finished: driver pod %s succeeded\n", p.Labels[kubeconf.LabelAppSelector], f.name)
		return true, nil
	case corev1.PodFailed:
		return true, driverFailedError(f.ctx, f.client, f.cfg.Stderr, p)
	}
	return false, nil
}

// cannotStart is followDriver's error for driver pod p, whose container
// cannot start (reason, for image, with the kubelet's message): it would
// wait for ever, so submit deletes it (its service and Secret go with it)
// and fails, as an executor pod in that state is an executor failure.
func (f *driverFollower) cannotStart(p *corev1.Pod, reason, image, msg string) error {
	fmt.Fprintf(f.cfg.Stderr, "Driver pod %s:%s cannot start: %s for image %s: %s; deleting it\n", f.ns, f.name, reason, image, msg)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(f.ctx), f.client.Timeout)
	err := f.client.CoreV1().Pods(f.ns).Delete(dctx, f.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	cancel()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		fmt.Fprintf(f.cfg.Stderr, "Driver pod %s:%s could not be deleted: %v\n", f.ns, f.name, f.client.APIError(err, "delete", "pods/"+f.name, f.ns))
	}
	return fmt.Errorf("%w: driver pod %s:%s cannot start: %s for image %s: %s", ErrDriverFailed, f.ns, f.name, reason, image, msg)
}

// watchEnded is followDriver's error when the watch ended with err before
// the pod did.
func (f *driverFollower) watchEnded(err error) error {
	switch {
	case errors.Is(err, errDriverDeleted):
		return fmt.Errorf("%w: driver pod %s:%s was deleted", ErrDriverFailed, f.ns, f.name)
	case f.ctx.Err() != nil:
		return f.keepsRunning()
	case err == nil:
		return fmt.Errorf("%w: the watch of driver pod %s:%s ended before the pod did", ErrDriverFailed, f.ns, f.name)
	}
	return f.client.APIError(err, "watch", "pods/"+f.name, f.ns)
}

// keepsRunning is followDriver's error when its ctx ended first.
func (f *driverFollower) keepsRunning() error {
	return fmt.Errorf("%w: the application keeps running (stop it with submit --master %s --kill %s:%s)",
		context.Cause(f.ctx), f.cfg.Master, f.ns, f.name)
}

// describeDriver is a one-line state of the driver pod: phase, container
// state, and the scheduler's reason when it is not placed.
func describeDriver(p *corev1.Pod) string {
	d := "phase: " + string(p.Status.Phase)
	if msg := executorpods.Unschedulable(p); msg != "" {
		d += ", FailedScheduling: " + msg
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			d += ", container running"
		case cs.State.Terminated != nil:
			d += fmt.Sprintf(", container terminated (exit code %d%s)", cs.State.Terminated.ExitCode, suffix(cs.State.Terminated.Reason))
		case cs.State.Waiting != nil:
			d += ", container waiting" + suffix(cs.State.Waiting.Reason)
		}
	}
	return d
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}
