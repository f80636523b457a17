package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A pod whose image cannot be pulled is reported waiting with ErrImagePull,
// then ImagePullBackOff; it never starts, and its deletion ends at once.
func TestUnpullableImage(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "unpullable/x:1", Command: []string{"true"}}}}}
	client := fake.NewSimpleClientset(pod.DeepCopy())
	p := newProvider(providerConfig{nodeName: "n1", nodeIP: "127.0.0.1", rootDir: t.TempDir(), client: client, logger: slog.Default()})
	reasons := make(chan string, 8)
	p.NotifyPods(context.Background(), func(pod *corev1.Pod) {
		if w := pod.Status.ContainerStatuses[0].State.Waiting; w != nil && pod.Status.ContainerStatuses[0].Image == "unpullable/x:1" {
			reasons <- w.Reason
		}
	})
	if err := p.CreatePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ErrImagePull", "ImagePullBackOff"} {
		select {
		case r := <-reasons:
			if r != want {
				t.Fatalf("container waiting with %q, want %q", r, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10s", want)
		}
	}
	got, err := p.GetPod(context.Background(), "ns", "p")
	if err != nil || got.Status.Phase != corev1.PodPending {
		t.Fatalf("pod %v, %v; want it pending", got, err)
	}
	if err := p.DeletePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetPod(context.Background(), "ns", "p"); err == nil {
		t.Fatal("the deleted pod is still on the node")
	}
	if _, err := client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err == nil {
		t.Fatal("the deleted pod is still in the API")
	}
}
