package executorpods

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An application with dynamic allocation goes through any number of
// executors, and the allocator runs as long as the application: what it
// keeps of an executor whose pod has ended and is gone from the API must
// be bounded. Before, every executor ever lost stayed in handled and
// reasons (a reason can hold a container's termination message), and
// every one the driver killed in killed: 1500 lost executors left 1500
// entries in each.
func TestEndedExecutorsAreNotKeptForEver(t *testing.T) {
	a := NewAllocator(testConfig(), nil, Options{Logger: zerolog.Nop()})
	a.target = 0 // the rounds below create nothing
	t0 := time.Unix(1000, 0)
	pod := func(id int64, phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: PodName("sparkpi-abc", id), CreationTimestamp: metav1.NewTime(t0),
				Labels: map[string]string{kubeconf.LabelExecutorID: strconv.FormatInt(id, 10)}},
			Spec:   corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: kubeconf.ExecutorContainerName, Image: "img"}}},
			Status: corev1.PodStatus{Phase: phase},
		}
		if phase == corev1.PodFailed {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeconf.ExecutorContainerName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}
		}
		return p
	}
	round := func(now time.Time) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.planLocked(now)
	}
	const cycles = 1500
	now := t0
	for i := range cycles {
		id := int64(i + 1)
		now = now.Add(time.Second)
		a.observe(pod(id, corev1.PodRunning), false)
		round(now)
		if i%2 == 1 { // the driver killed it, as Kill does
			a.mu.Lock()
			a.killed[id], a.deleting[id] = true, true
			a.mu.Unlock()
		}
		a.observe(pod(id, corev1.PodFailed), false)
		round(now)
		a.observe(pod(id, corev1.PodFailed), true)
		round(now)
	}
	a.mu.Lock()
	pods, handled, killed, reasons := len(a.pods), len(a.handled), len(a.killed), a.reasons.Len()
	a.mu.Unlock()
	if pods != 0 || handled != 0 || killed != 0 || reasons > maxLossReasons {
		t.Fatalf("after %d executors lost and their pods gone: %d pods, %d handled, %d killed, %d reasons kept; want 0, 0, 0 and at most %d",
			cycles, pods, handled, killed, reasons, maxLossReasons)
	}
	reason, err := a.ExecutorLossReason(context.Background(), fmt.Sprint(cycles))
	if err != nil || reason == "" {
		t.Fatalf("the last executor's loss reason: %q, %v", reason, err)
	}
}
