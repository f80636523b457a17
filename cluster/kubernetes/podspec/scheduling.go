package podspec

// scheduling.go holds the steps of where and how a pod is scheduled and
// pulled: node selector, scheduler name and image pull secrets.

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// NodeSelector adds sel's entries to the pod's node selector, over those
// of the same key.
func NodeSelector(sel map[string]string) Step {
	return func(pod *corev1.Pod) {
		pod.Spec.NodeSelector = merge(pod.Spec.NodeSelector, sel)
	}
}

// SchedulerName makes name the pod's scheduler, unless name is "".
func SchedulerName(name string) Step {
	return func(pod *corev1.Pod) {
		if name != "" {
			pod.Spec.SchedulerName = name
		}
	}
}

// PullSecrets adds the image pull secrets names to the pod's.
func PullSecrets(names []string) Step {
	return func(pod *corev1.Pod) {
		for _, n := range names {
			if !slices.ContainsFunc(pod.Spec.ImagePullSecrets, func(r corev1.LocalObjectReference) bool { return r.Name == n }) {
				pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: n})
			}
		}
	}
}
