package kubetest

// wait.go holds what Start waits for and with: the API server's /readyz,
// the default ServiceAccount and the nodes; polling a readiness condition
// while watching that no component has exited, a node's schedulability,
// and free loopback ports.

import (
	"context"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitFor polls ok until it holds, ctx ends (an error naming what) or one of procs exits.
func (c *ControlPlane) waitFor(ctx context.Context, what string, procs []*process, ok func() bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok() {
			return nil
		}
		for _, p := range procs {
			if p.exited() {
				return fmt.Errorf("%w: %s while waiting for %s: %v\n%s", ErrComponentExited, p.name, what, p.err, p.logTail(20))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubetest: waiting for %s: %w (bounded by the start context and WithStartTimeout)", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitForAPIServer waits until the API server's /readyz answers "ok".
func (c *ControlPlane) waitForAPIServer(ctx context.Context) error {
	return c.waitFor(ctx, "kube-apiserver /readyz", []*process{c.etcd, c.apiserver}, func() bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return c.api.ready(rctx)
	})
}

// waitForDefaultServiceAccount waits until the default namespace's default ServiceAccount exists
// (the controller manager creates it).
func (c *ControlPlane) waitForDefaultServiceAccount(ctx context.Context) error {
	return c.waitFor(ctx, "the default ServiceAccount", c.components(), func() bool {
		_, err := c.api.serviceAccount(ctx, metav1.NamespaceDefault, "default")
		return err == nil
	})
}

// waitForNodes waits until every node is Ready and schedulable.
func (c *ControlPlane) waitForNodes(ctx context.Context) error {
	return c.waitFor(ctx, "nodes Ready and schedulable", c.components(), func() bool {
		for _, name := range c.nodeNames {
			n, err := c.api.node(ctx, name)
			if err != nil || !schedulable(n) {
				return false
			}
		}
		return true
	})
}

// schedulable reports whether n is Ready, not cordoned and has no NoSchedule or NoExecute taint.
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// freePort is a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
