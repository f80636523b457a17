package executorpods

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testConfig() *kubeconf.Config {
	return &kubeconf.Config{AppID: "spark-1", AppName: "SparkPi", Namespace: "default", PodNamePrefix: "sparkpi-abc", BatchSize: 10,
		BatchDelay: time.Second, ExecutorTimeout: time.Minute, MaxPendingPods: 1 << 30, DeleteOnTermination: true,
		MaxExecutorFailures: 3, ExecutorImage: "img", ExecutorCores: 1, ExecutorMemoryMiB: 1024, ExecutorOverheadMiB: 384,
		ExecutorRequestCores: "1", Executable: "sparkrpc", PullPolicy: "IfNotPresent"}
}

func TestDecide(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pod := func(id int64, ph podPhase, age time.Duration) executorPodState {
		return executorPodState{ID: id, Name: PodName("sparkpi-abc", id), Phase: ph, Created: t0.Add(-age), ExitCode: -1}
	}
	graceful := func(st executorPodState, end time.Time) executorPodState { st.GraceEnd = end; return st }
	unpulled := func(st executorPodState) executorPodState {
		st.StartFailure, st.Image = "ImagePullBackOff", "unpullable/x"
		return st
	}
	pods := func(ps ...executorPodState) map[int64]executorPodState {
		m := map[int64]executorPodState{}
		for _, p := range ps {
			m[p.ID] = p
		}
		return m
	}
	cases := []struct {
		name    string
		cfg     func(*kubeconf.Config)
		in      planInput
		create  []int64
		delete  []int64
		lost    []int64
		failure []bool
		stalled bool
		running int
		pending int
		decom   []int64
		giveUp  bool
	}{
		{name: "first batch", in: planInput{Target: 2, NextID: 1, SinceLastBatch: time.Hour}, create: []int64{1, 2}, pending: 2},
		{name: "batch size bounds a round", cfg: func(c *kubeconf.Config) { c.BatchSize = 3 },
			in: planInput{Target: 10, NextID: 1, SinceLastBatch: time.Hour}, create: []int64{1, 2, 3}, pending: 3},
		{name: "wait for the batch delay", in: planInput{Target: 2, NextID: 1, SinceLastBatch: 10 * time.Millisecond}},
		{name: "wait for the last batch to be seen", in: planInput{Target: 4, NextID: 3, SinceLastBatch: time.Hour,
			Created: map[int64]time.Time{1: t0, 2: t0}}, pending: 2},
		{name: "all running: nothing to do", in: planInput{Target: 2, NextID: 3, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, time.Second), pod(2, podRunning, time.Second))}, running: 2},
		{name: "failed pod: lost, deleted, replaced", in: planInput{Target: 2, NextID: 3, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, time.Second), pod(2, podFailed, time.Second))},
			create: []int64{3}, delete: []int64{2}, lost: []int64{2}, failure: []bool{true}, running: 1, pending: 1},
		{name: "failed pod kept without deleteOnTermination", cfg: func(c *kubeconf.Config) { c.DeleteOnTermination = false },
			in:     planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour, Pods: pods(pod(1, podFailed, time.Second))},
			create: []int64{2}, lost: []int64{1}, failure: []bool{true}, pending: 1},
		{name: "deleted pod: lost, not a failure, replaced", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podDeleted, time.Second))}, create: []int64{2}, lost: []int64{1}, failure: []bool{false}, pending: 1},
		{name: "killed by the driver: not a failure", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podFailed, time.Second)), Killed: map[int64]bool{1: true}},
			create: []int64{2}, delete: []int64{1}, lost: []int64{1}, failure: []bool{false}, pending: 1},
		{name: "handled loss is not reported twice", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podFailed, time.Second), pod(2, podRunning, time.Second)), Handled: map[int64]bool{1: true}, Deleting: map[int64]bool{1: true}},
			running: 1},
		{name: "pending past the timeout: deleted and replaced", in: planInput{Target: 2, NextID: 3, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, 2*time.Minute), pod(2, podPending, 2*time.Minute))},
			delete: []int64{2}, create: []int64{3}, running: 1, pending: 1},
		{name: "unseen past the timeout: deleted, forgotten, replaced", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Created: map[int64]time.Time{1: t0.Add(-2 * time.Minute)}}, delete: []int64{1}, create: []int64{2}, pending: 1},
		{name: "fewer wanted: newest pending deleted", in: planInput{Target: 1, NextID: 4, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, time.Second), pod(2, podPending, time.Second), pod(3, podPending, time.Second))},
			delete: []int64{3, 2}, running: 1},
		{name: "max pending pods bounds creation", cfg: func(c *kubeconf.Config) { c.MaxPendingPods = 2 },
			in:     planInput{Target: 5, NextID: 3, SinceLastBatch: time.Hour, Pods: pods(pod(1, podPending, time.Second))},
			create: []int64{3}, pending: 2},
		{name: "max pending pods reached: stalled", cfg: func(c *kubeconf.Config) { c.MaxPendingPods = 2 },
			in:      planInput{Target: 5, NextID: 3, SinceLastBatch: time.Hour, Pods: pods(pod(1, podPending, time.Second), pod(2, podPending, time.Second))},
			stalled: true, pending: 2},
		{name: "being deleted counts for nothing", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, time.Second)), Deleting: map[int64]bool{1: true}}, create: []int64{2}, pending: 1},
		{name: "decommissioning: not lost, told once, replaced", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(graceful(pod(1, podDecommissioning, time.Second), t0.Add(30*time.Second)))}, create: []int64{2}, pending: 1, decom: []int64{1}},
		{name: "decommissioning, told already", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods:           pods(graceful(pod(1, podDecommissioning, time.Second), t0.Add(30*time.Second)), pod(2, podRunning, time.Second)),
			Decommissioned: map[int64]bool{1: true}}, running: 1},
		{name: "decommissioning killed by the driver: not told", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods:   pods(graceful(pod(1, podDecommissioning, time.Second), t0.Add(30*time.Second)), pod(2, podRunning, time.Second)),
			Killed: map[int64]bool{1: true}, Deleting: map[int64]bool{1: true}}, running: 1},
		{name: "decommissioning past its grace period: lost, no failure", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods:           pods(graceful(pod(1, podDecommissioning, time.Minute), t0.Add(-time.Second)), pod(2, podRunning, time.Second)),
			Decommissioned: map[int64]bool{1: true}}, lost: []int64{1}, failure: []bool{false}, running: 1},
		{name: "decommissioning lost already", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods:    pods(graceful(pod(1, podDecommissioning, time.Minute), t0.Add(-time.Second)), pod(2, podRunning, time.Second)),
			Handled: map[int64]bool{1: true}}, running: 1},
		{name: "image cannot be pulled: a failure at once, deleted, replaced", in: planInput{Target: 1, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(unpulled(pod(1, podFailed, time.Second)))}, create: []int64{2}, delete: []int64{1}, lost: []int64{1}, failure: []bool{true}, pending: 1},
		{name: "creation in backoff", in: planInput{Target: 2, NextID: 1, SinceLastBatch: time.Hour, CreateAfter: t0.Add(time.Second)}},
		{name: "creation after its backoff", in: planInput{Target: 1, NextID: 1, SinceLastBatch: time.Hour, CreateAfter: t0.Add(-time.Second)},
			create: []int64{1}, pending: 1},
		{name: "failed deletion waits for its backoff", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podFailed, time.Second), pod(2, podRunning, time.Second)), Handled: map[int64]bool{1: true},
			DeleteAfter: map[int64]time.Time{1: t0.Add(time.Second)}}, running: 1},
		{name: "failed deletion asked again after its backoff", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podFailed, time.Second), pod(2, podRunning, time.Second)), Handled: map[int64]bool{1: true},
			DeleteAfter: map[int64]time.Time{1: t0.Add(-time.Second)}}, delete: []int64{1}, running: 1},
		{name: "killed pod whose deletion failed: deleted again", in: planInput{Target: 1, NextID: 3, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, time.Second), pod(2, podRunning, time.Second)), Killed: map[int64]bool{1: true}},
			delete: []int64{1}, running: 1},
		{name: "refused past the timeout, none running: give up", in: planInput{Target: 2, NextID: 1, SinceLastBatch: time.Hour,
			CreateAfter: t0.Add(time.Second), RefusedSince: t0.Add(-2 * time.Minute), RefusedBy: "ResourceQuota q"}, giveUp: true},
		{name: "refused past the timeout, one running: goes on", in: planInput{Target: 2, NextID: 2, SinceLastBatch: time.Hour,
			Pods: pods(pod(1, podRunning, time.Second)), CreateAfter: t0.Add(time.Second), RefusedSince: t0.Add(-2 * time.Minute)}, running: 1},
		{name: "refused within the timeout: goes on", in: planInput{Target: 2, NextID: 1, SinceLastBatch: time.Hour,
			CreateAfter: t0.Add(time.Second), RefusedSince: t0.Add(-30 * time.Second)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			tc.in.Now = t0
			p := decide(cfg, tc.in)
			var del, lost, decom []int64
			for _, d := range p.Decommission {
				decom = append(decom, d.ID)
			}
			if !slices.Equal(decom, tc.decom) || (p.GiveUp != "") != tc.giveUp {
				t.Errorf("decommission %v give up %q; want %v %v", decom, p.GiveUp, tc.decom, tc.giveUp)
			}
			var fail []bool
			for _, d := range p.Delete {
				del = append(del, d.ID)
			}
			for _, l := range p.Lost {
				lost = append(lost, l.ID)
				fail = append(fail, l.Failure)
				if l.Reason == "" {
					t.Errorf("loss of %d has no reason", l.ID)
				}
			}
			if !slices.Equal(p.Create, tc.create) || !slices.Equal(del, tc.delete) || !slices.Equal(lost, tc.lost) ||
				!slices.Equal(fail, tc.failure) || (p.Stalled != "") != tc.stalled || p.Running != tc.running || p.Pending != tc.pending {
				t.Fatalf("decide = create %v delete %v lost %v failure %v stalled %q running %d pending %d; want create %v delete %v lost %v failure %v stalled %v running %d pending %d",
					p.Create, del, lost, fail, p.Stalled, p.Running, p.Pending, tc.create, tc.delete, tc.lost, tc.failure, tc.stalled, tc.running, tc.pending)
			}
		})
	}
}

func TestPodStateReasons(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-exec-3", Labels: map[string]string{kubeconf.LabelExecutorID: "3"}}}
	}
	failed := base()
	failed.Status.Phase = corev1.PodFailed
	failed.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeconf.ExecutorContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}
	evicted := base()
	evicted.Status.Phase, evicted.Status.Reason, evicted.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
	deleting := base()
	deleting.Status.Phase = corev1.PodPending
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	draining := base()
	draining.Status.Phase = corev1.PodRunning
	draining.DeletionTimestamp = &now
	drained := draining.DeepCopy()
	drained.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeconf.ExecutorContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}
	pull := base()
	pull.Spec.Containers = []corev1.Container{{Name: kubeconf.ExecutorContainerName, Image: "unpullable/x:1"}}
	pull.Status.Phase = corev1.PodPending
	pull.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeconf.ExecutorContainerName,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull access denied"}}}}
	secretless := pull.DeepCopy()
	secretless.Spec.Containers[0].Image = "img"
	secretless.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "s" not found`}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		deleted bool
		phase   podPhase
		want    []string
		failure bool
	}{
		{"oom", failed, false, podFailed, []string{"id 3", "137(SIGKILL", "OOMKilled"}, true},
		{"evicted", evicted, false, podFailed, []string{"Evicted", "low on resource"}, false},
		{"deleting", deleting, false, podDeleted, []string{"deleted by a user or the framework"}, false},
		{"gone", base(), true, podDeleted, []string{"deleted"}, false},
		{"running while deleted", draining, false, podDecommissioning, nil, false},
		{"ended while deleted", drained, false, podDeleted, []string{"deleted by a user or the framework"}, false},
		{"image cannot be pulled", pull, false, podFailed, []string{"ErrImagePull", "unpullable/x:1", "pull access denied"}, true},
		{"container config error", secretless, false, podFailed, []string{"CreateContainerConfigError", `secret "s" not found`}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := podState(tc.pod, tc.deleted)
			if !ok || st.ID != 3 || st.Phase != tc.phase {
				t.Fatalf("podState = %+v, %v", st, ok)
			}
			if tc.phase == podDecommissioning && !st.GraceEnd.Equal(now.Time) {
				t.Errorf("grace period ends %v, want %v", st.GraceEnd, now)
			}
			r := lossReason(st)
			for _, w := range tc.want {
				if !strings.Contains(r, w) {
					t.Errorf("reason %q lacks %q", r, w)
				}
			}
			if isFailure(st) != tc.failure {
				t.Errorf("isFailure = %v", !tc.failure)
			}
		})
	}
	if _, ok := podState(&corev1.Pod{}, false); ok {
		t.Fatal("a pod without spark-exec-id was accepted")
	}
}
