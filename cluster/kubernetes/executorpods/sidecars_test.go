package executorpods

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sidecarPod is executor 1's pod, from an executors' template with a
// sidecar (log-shipper) after Spark's container, as Pod builds it.
func sidecarPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: PodName("sparkpi-abc", 1), CreationTimestamp: metav1.NewTime(time.Unix(1000, 0)),
			Labels: map[string]string{kubeconf.LabelExecutorID: "1"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeName: "n1",
			Containers: []corev1.Container{{Name: kubeconf.ExecutorContainerName, Image: "img"}, {Name: "log-shipper", Image: "busybox:1.36"}}},
	}
}

// The executor's container is OOM-killed while the template's sidecar keeps
// running, so the pod's phase stays Running (restartPolicy Never). As Spark
// does (spark.kubernetes.executor.checkAllContainers, the default since
// 4.0), the allocator sees a failed executor pod, counts the failure and
// replaces it. Before, it counted a running executor for ever.
func TestExecutorContainerEndsBesideASidecar(t *testing.T) {
	pod := sidecarPod()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: kubeconf.ExecutorContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}},
		{Name: "log-shipper", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
	}
	st, ok := podState(pod, false)
	if !ok {
		t.Fatal("podState refused the pod")
	}
	if st.Phase != podFailed {
		t.Errorf("podState: phase %v, want Failed (the executor's container exited 137, OOMKilled)", st.Phase)
	}
	now := time.Unix(1100, 0)
	p := decide(testConfig(), planInput{Now: now, Target: 1, Pods: map[int64]executorPodState{1: st}, Created: map[int64]time.Time{},
		Handled: map[int64]bool{}, Killed: map[int64]bool{}, Deleting: map[int64]bool{}, NextID: 2, SinceLastBatch: time.Hour})
	if len(p.Lost) != 1 || !p.Lost[0].Failure || len(p.Create) != 1 {
		t.Errorf("decide: running %d, lost %+v, create %v; want executor 1 lost as a failure and a replacement created", p.Running, p.Lost, p.Create)
	}
}

// An init container of the executors' template (a common way to fetch jars
// or credentials) whose image cannot be pulled keeps the pod Pending with
// Init:ErrImagePull for ever. As for Spark's container's image, that is a
// start failure, named with its image. Before, the pod waited for
// spark.kubernetes.allocation.executor.timeout, was deleted without a
// failure counted and replaced, for ever and without a word.
func TestInitContainerImageCannotBePulled(t *testing.T) {
	pod := sidecarPod()
	pod.Spec.InitContainers = []corev1.Container{{Name: "fetch-jars", Image: "registry.example/fetch:missing"}}
	pod.Status.Phase = corev1.PodPending
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "fetch-jars", Image: "registry.example/fetch:missing",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: kubeconf.ExecutorContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
		{Name: "log-shipper", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
	}
	st, ok := podState(pod, false)
	if !ok {
		t.Fatal("podState refused the pod")
	}
	if st.Phase != podFailed || st.StartFailure != "ImagePullBackOff" || st.Image != "registry.example/fetch:missing" {
		t.Errorf("podState: phase %v, start failure %q, image %q; want Failed, ImagePullBackOff, registry.example/fetch:missing",
			st.Phase, st.StartFailure, st.Image)
	}
	if r := lossReason(st); !strings.Contains(r, "registry.example/fetch:missing") {
		t.Errorf("loss reason %q does not name the image", r)
	}
}
