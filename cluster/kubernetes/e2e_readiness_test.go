package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// holdGate is the scheduling gate that keeps the test's driver pod
// unscheduled, hence not Ready, until the test removes it.
const holdGate = "sparkrpc.test/hold"

// gatedDriverPod creates a pod that stands for a client-mode driver pod
// (spark.kubernetes.driver.pod.name): it runs `sleep` once scheduled, and
// a scheduling gate holds it Pending until released.
func gatedDriverPod(t *testing.T, c kubernetes.Interface, name, appID string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kubeconf.LabelAppSelector: appID, kubeconf.LabelRole: kubeconf.RoleDriver}},
		Spec: corev1.PodSpec{
			RestartPolicy:   corev1.RestartPolicyNever,
			SchedulingGates: []corev1.PodSchedulingGate{{Name: holdGate}},
			Containers:      []corev1.Container{{Name: kubeconf.DriverContainerName, Image: "sparkrpc:test", Command: []string{"sleep"}, Args: []string{"600"}}},
		},
	}
	if _, err := c.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

func releaseGate(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	p, err := c.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.SchedulingGates = nil
	if _, err := c.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readinessConf is a client-mode SparkPi whose driver pod is name.
func readinessConf(t *testing.T, appID, name, timeout string) *actor.Conf {
	return e2eConf(t, 2).Set(cluster.KeyAppID, appID).Set(kubeconf.KeyDriverPodName, name).Set(kubeconf.KeyDriverReadinessTimeout, timeout)
}

// TestKubernetesDriverReadiness: with a driver pod, executor pods are
// created only once it is Ready (and are owned by it); a driver pod that
// never gets Ready delays them by spark.kubernetes.allocation.driver.readinessTimeout,
// with a warning, and the application still runs.
func TestKubernetesDriverReadiness(t *testing.T) {
	c := needCluster(t)
	t.Run("executors after the driver pod is ready", func(t *testing.T) {
		appID := kubeconf.NewAppID()
		name := fmt.Sprintf("rd%d-driver", time.Now().UnixNano()%1e9)
		gatedDriverPod(t, c, name, appID)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// One watch on every pod of the application orders the driver
		// pod's updates and the executor pods' creations as the API server
		// applied them.
		w, err := c.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: kubeconf.LabelAppSelector + "=" + appID})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		m, err := cluster.ParseMaster("k8s://" + controlPlane.Server())
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr := &syncBuffer{}, &syncBuffer{}
		conf := readinessConf(t, appID, name, "120s")
		done := make(chan error, 1)
		go func() { done <- submitTo(ctx, m, conf, stdout, stderr, "SparkPi", "4") }()
		driverReady, released := false, false
		var firstExecutor *corev1.Pod
		deadline := time.After(90 * time.Second)
		for firstExecutor == nil {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the watch ended")
				}
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				switch {
				case p.Name == name && podReady(p):
					driverReady = true
				case p.Labels[kubeconf.LabelRole] == kubeconf.RoleExecutor && ev.Type == watch.Added:
					firstExecutor = p
				}
			case <-time.After(200 * time.Millisecond):
				// The allocator says it waits before the test lets the
				// driver pod be scheduled.
				if !released && strings.Contains(stderr.String(), "Waiting up to 2m0s for driver pod default:"+name) {
					releaseGate(t, c, name)
					released = true
				}
			case err := <-done:
				t.Fatalf("submit ended before any executor pod: %v\n%s", err, stderr)
			case <-deadline:
				t.Fatalf("no executor pod after 90s (gate released: %v)", released)
			}
		}
		if !driverReady {
			t.Fatalf("executor pod %s was created before driver pod %s was Ready", firstExecutor.Name, name)
		}
		if o := firstExecutor.OwnerReferences; len(o) != 1 || o[0].Name != name || o[0].Controller == nil || !*o[0].Controller {
			t.Errorf("executor pod %s owner references %v, want the driver pod %s", firstExecutor.Name, o, name)
		}
		if err := <-done; err != nil {
			t.Fatalf("submit: %v\n%s", err, stderr)
		}
		checkPi(t, stdout.String(), 4)
		if strings.Contains(stderr.String(), kubeconf.KeyDriverReadinessTimeout) {
			t.Errorf("a readiness timeout was reported:\n%s", stderr)
		}
	})
	t.Run("driver pod never ready", func(t *testing.T) {
		appID := kubeconf.NewAppID()
		name := fmt.Sprintf("rn%d-driver", time.Now().UnixNano()%1e9)
		gatedDriverPod(t, c, name, appID)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		stdout, stderr, err := submit(ctx, t, readinessConf(t, appID, name, "1"), "SparkPi", "4")
		if err != nil {
			t.Fatalf("submit: %v\n%s", err, stderr)
		}
		checkPi(t, stdout.String(), 4)
		want := "Driver pod default:" + name + " is not ready after 1s (" + kubeconf.KeyDriverReadinessTimeout + "); requesting executors anyway"
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("no warning %q in the log:\n%s", want, stderr)
		}
		if left := executorPods(t, c, appID); len(left) != 0 {
			t.Fatalf("%d executor pods left", len(left))
		}
	})
}
