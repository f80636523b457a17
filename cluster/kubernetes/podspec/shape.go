package podspec

// shape.go holds Shape, the steps of a role's shape in their fixed order.

import (
	"slices"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
)

// Shape is the steps, after Overlay, that s gives a role's pods, in this
// order: the local directory, the volumes, the Secrets, the variables from
// Secrets, the variables, the image pull secrets, the node selector and
// the scheduler. Build them with Build(s.Template, s.TemplateContainer,
// ...); the role's least-privilege steps come last.
func Shape(s kubeconf.PodShape) []Step {
	return []Step{
		LocalDir(),
		Volumes(s.Volumes),
		Secrets(s.Secrets),
		Env(s.SecretEnv),
		Env(s.Env),
		PullSecrets(s.PullSecrets),
		NodeSelector(s.NodeSelector),
		SchedulerName(s.SchedulerName),
	}
}

// Pod is the pod of a role of shape s: own (the pod sparkrpc builds, with
// its one container) over s's template, then Shape(s), then extra steps,
// then Restricted.
func Pod(s kubeconf.PodShape, own *corev1.Pod, extra ...Step) *corev1.Pod {
	steps := slices.Concat([]Step{Overlay(own)}, Shape(s), extra, []Step{Restricted()})
	return Build(s.Template, s.TemplateContainer, steps...)
}
