package podspec

// privilege.go holds the least-privilege steps: the executors' service
// account token, and the restricted security context of both roles.

import corev1 "k8s.io/api/core/v1"

// NonRootUID is the user (and group) pods run as by default: the
// distroless images' nonroot user, which sparkrpc's image runs as.
const NonRootUID = 65532

// NoTokenUnless leaves the pod's service account token mounted only when
// ownAccount is true (the role has a service account of its own) or the
// template says whether to mount it; otherwise the pod gets no token
// (automountServiceAccountToken: false): executors never call the API
// server.
func NoTokenUnless(ownAccount bool) Step {
	return func(pod *corev1.Pod) {
		if !ownAccount && pod.Spec.AutomountServiceAccountToken == nil {
			no := false
			pod.Spec.AutomountServiceAccountToken = &no
		}
	}
}

// Restricted gives the pod, and Spark's container, the security context
// of PodSecurity's "restricted" level where the template sets none: run
// as NonRootUID (the pod's volumes owned by its group), no privilege
// escalation, a read-only root file system, every capability dropped,
// the runtime's default seccomp profile. A template that sets a security
// context, even an empty one, on the pod or on Spark's container, keeps
// its own on both levels, as Spark does: filled in, the other level could
// contradict it (runAsNonRoot beside a template's runAsUser 0 is a
// container the kubelet never starts). That is how to turn this off.
func Restricted() Step {
	return func(pod *corev1.Pod) {
		c := &pod.Spec.Containers[0]
		if pod.Spec.SecurityContext != nil || c.SecurityContext != nil {
			return
		}
		yes, no, uid := true, false, int64(NonRootUID)
		seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid,
			FSGroup: &uid, SeccompProfile: seccomp}
		c.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: &yes, AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: seccomp.DeepCopy()}
	}
}
