package podspec

// build.go holds Step and Build: a pod is its base (the pod template, or
// nothing) transformed by steps in a fixed order.

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Step transforms a pod, as one of Spark's feature steps does. Spark's
// container is the pod's first (Build puts it there).
type Step func(pod *corev1.Pod)

// Build returns the pod the steps make of template (nil for none): a copy
// of it with the container named container (its first when container is
// "") moved first, as Spark's container, the others kept after it as
// sidecars, and what only a live pod has (its status, uid, resource
// version) cleared. The template itself is not changed.
func Build(template *corev1.Pod, container string, steps ...Step) *corev1.Pod {
	pod := base(template, container)
	for _, s := range steps {
		s(pod)
	}
	return pod
}

// base is the pod Build starts from.
func base(template *corev1.Pod, container string) *corev1.Pod {
	if template == nil {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{}}}}
	}
	pod := template.DeepCopy()
	pod.Status = corev1.PodStatus{}
	pod.ObjectMeta = metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations}
	pod.Spec.NodeName = ""
	i := 0
	for j, c := range pod.Spec.Containers {
		if container != "" && c.Name == container {
			i = j
		}
	}
	if len(pod.Spec.Containers) == 0 {
		pod.Spec.Containers = []corev1.Container{{}}
	}
	cs := pod.Spec.Containers
	spark := cs[i]
	copy(cs[1:i+1], cs[:i])
	cs[0] = spark
	return pod
}

// setEnv sets variables of c, replacing those of the same name.
func setEnv(c *corev1.Container, vars ...corev1.EnvVar) {
	for _, v := range vars {
		replaced := false
		for i := range c.Env {
			if c.Env[i].Name == v.Name {
				c.Env[i], replaced = v, true
			}
		}
		if !replaced {
			c.Env = append(c.Env, v)
		}
	}
}

// addVolume adds a volume to the pod, replacing one of the same name.
func addVolume(pod *corev1.Pod, v corev1.Volume) {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == v.Name {
			pod.Spec.Volumes[i] = v
			return
		}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, v)
}

// addMount adds a mount to c, replacing one at the same path.
func addMount(c *corev1.Container, m corev1.VolumeMount) {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == m.MountPath {
			c.VolumeMounts[i] = m
			return
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, m)
}
