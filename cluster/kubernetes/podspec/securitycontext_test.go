package podspec

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
)

// A template whose image must run as root says so on one level; the
// restricted context added on the other does not contradict it. Before,
// its runAsNonRoot made the kubelet refuse to start the container
// (CreateContainerConfigError: "container's runAsUser breaks non-root
// policy").
func TestTemplateSecurityContextIsNotContradicted(t *testing.T) {
	root, no := int64(0), false
	own := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "spark", Image: "img"}}}}
	for _, tc := range []struct {
		name     string
		template *corev1.Pod
	}{
		{"on the pod", &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: &root, RunAsNonRoot: &no},
			Containers: []corev1.Container{{Name: "spark"}}}}},
		{"on Spark's container", &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "spark", SecurityContext: &corev1.SecurityContext{RunAsUser: &root}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := Pod(kubeconf.PodShape{Template: tc.template}, own)
			c := pod.Spec.Containers[0]
			// The container's runAsNonRoot wins over the pod's.
			nonRoot := pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.RunAsNonRoot != nil && *pod.Spec.SecurityContext.RunAsNonRoot
			if c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil {
				nonRoot = *c.SecurityContext.RunAsNonRoot
			}
			user := int64(-1)
			if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.RunAsUser != nil {
				user = *pod.Spec.SecurityContext.RunAsUser
			}
			if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
				user = *c.SecurityContext.RunAsUser
			}
			if nonRoot && user == 0 {
				t.Errorf("Spark's container runs as user 0 with runAsNonRoot: it can never start; pod %+v, container %+v",
					pod.Spec.SecurityContext, c.SecurityContext)
			}
		})
	}
}

// A template that sets only a pod-level security context for its volumes
// (fsGroup, as Spark's docs show for PVCs) says nothing about Spark's
// container: the container keeps the restricted context (no privilege
// escalation, every capability dropped, non-root). A version of this day's
// fix for contradicting levels kept the template's context on both levels
// whenever it set either, and left the container without any.
func TestPodLevelFSGroupKeepsTheContainerRestricted(t *testing.T) {
	group := int64(185)
	tmpl := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{FSGroup: &group},
		Containers: []corev1.Container{{Name: "spark"}}}}
	own := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "spark", Image: "img"}}}}
	pod := Pod(kubeconf.PodShape{Template: tmpl}, own)
	sc := pod.Spec.Containers[0].SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) == 0 || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Fatalf("Spark's container's security context = %+v, want the restricted one (the template set only the pod's fsGroup)", sc)
	}
}
