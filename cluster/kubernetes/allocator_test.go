package kubernetes

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAllocatorIO drives the allocator's I/O side through client-go's
// in-memory clientset (the end-to-end tests use a real API server): pods
// are created from the informer's snapshot, a failed pod becomes a loss
// with its exit code and is replaced, a killed executor's pod is deleted,
// and Stop deletes what is left.
func TestAllocatorIO(t *testing.T) {
	cs := fake.NewClientset()
	client := &Client{Interface: cs, Server: "fake", Credential: "none", TimeoutKey: KeySubmissionRequestTimeout, Timeout: 5 * time.Second}
	cfg := testConfig()
	cfg.NumExecutors = 2
	cfg.BatchDelay = 10 * time.Millisecond
	var mu sync.Mutex
	lost := map[string]string{}
	a := NewAllocator(cfg, client, AllocatorOptions{DriverURL: "spark://CoarseGrainedScheduler@127.0.0.1:1", Logger: zerolog.Nop(),
		OnLost: func(id, reason string) {
			mu.Lock()
			lost[id] = reason
			mu.Unlock()
		}})
	ctx := t.Context()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	pods := cs.CoreV1().Pods("default")
	names := func() map[string]*corev1.Pod {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*corev1.Pod{}
		for i := range l.Items {
			m[l.Items[i].Name] = &l.Items[i]
		}
		return m
	}
	eventually(t, "2 executor pods", func() bool { return len(names()) == 2 })
	p1 := names()["sparkpi-abc-exec-1"]
	if p1 == nil || p1.Labels[LabelRole] != RoleExecutor || p1.Labels[LabelAppSelector] != "spark-1" {
		t.Fatalf("pods %v", names())
	}
	// Pod 1 runs, then fails with exit code 3.
	p1.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, p1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p1.Status.Phase = corev1.PodFailed
	p1.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ExecutorContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}
	if _, err := pods.UpdateStatus(ctx, p1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the loss of executor 1", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(lost["1"], "exit code 3")
	})
	r, err := a.ExecutorLossReason(ctx, "1")
	if err != nil || !strings.Contains(r, "exit code 3") {
		t.Fatalf("ExecutorLossReason = %q, %v", r, err)
	}
	eventually(t, "pod 1 deleted and pod 3 replacing it", func() bool {
		m := names()
		return m["sparkpi-abc-exec-1"] == nil && m["sparkpi-abc-exec-3"] != nil && m["sparkpi-abc-exec-2"] != nil
	})
	if err := a.KillExecutors(ctx, []string{"2"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod 2 deleted, not replaced", func() bool {
		m := names()
		return len(m) == 1 && m["sparkpi-abc-exec-3"] != nil
	})
	if _, _, wanted := a.Counts(); wanted != 1 {
		t.Fatalf("wanted %d after a kill", wanted)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if m := names(); len(m) != 0 {
		t.Fatalf("pods left after Stop: %v", m)
	}
}
