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
// its own on that level: that is how to turn this off there. When it names
// a user (runAsUser or runAsNonRoot) on either level, the other level gets
// no user and no runAsNonRoot of ours, which could contradict it
// (runAsNonRoot beside a template's runAsUser 0 is a container the kubelet
// never starts).
func Restricted() Step {
	return func(pod *corev1.Pod) {
		c := &pod.Spec.Containers[0]
		yes, no, uid := true, false, int64(NonRootUID)
		seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		podSet, cSet := pod.Spec.SecurityContext != nil, c.SecurityContext != nil
		// The user a template names on one level, the other level does not
		// contradict: no runAsNonRoot or user of ours beside it.
		userSet := podSet && (pod.Spec.SecurityContext.RunAsUser != nil || pod.Spec.SecurityContext.RunAsNonRoot != nil) ||
			cSet && (c.SecurityContext.RunAsUser != nil || c.SecurityContext.RunAsNonRoot != nil)
		if !podSet {
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: &uid, SeccompProfile: seccomp}
			if !userSet {
				pod.Spec.SecurityContext.RunAsNonRoot, pod.Spec.SecurityContext.RunAsUser, pod.Spec.SecurityContext.RunAsGroup = &yes, &uid, &uid
			}
		}
		if !cSet {
			c.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
				ReadOnlyRootFilesystem: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile: seccomp.DeepCopy()}
			if !userSet {
				c.SecurityContext.RunAsNonRoot = &yes
			}
		}
	}
}
