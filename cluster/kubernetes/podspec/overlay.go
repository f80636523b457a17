package podspec

// overlay.go is the basic step (Spark's BasicDriverFeatureStep and
// BasicExecutorFeatureStep merged onto a template): sparkrpc's own fields
// win over the template's, the template's others are kept.

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// Overlay lays own, the pod sparkrpc builds with one container, over the
// pod: own's name, namespace, owner references, restart policy and
// hostname; its labels and annotations over the pod's; its service
// account and node selector entries when it has them; its volumes over
// those of the same name. Spark's container takes own's container's name,
// image, pull policy, command, args and ports, its variables and mounts
// over those of the same name, its resource requests and limits over the
// same resources'; the container's other fields (its security context,
// probes, ...) are kept.
func Overlay(own *corev1.Pod) Step {
	return func(pod *corev1.Pod) {
		pod.TypeMeta = own.TypeMeta
		pod.Name, pod.Namespace = own.Name, own.Namespace
		pod.OwnerReferences = own.OwnerReferences
		pod.Labels = merge(pod.Labels, own.Labels)
		pod.Annotations = merge(pod.Annotations, own.Annotations)
		pod.Spec.RestartPolicy = own.Spec.RestartPolicy
		if own.Spec.Hostname != "" {
			pod.Spec.Hostname = own.Spec.Hostname
		}
		if own.Spec.ServiceAccountName != "" {
			pod.Spec.ServiceAccountName = own.Spec.ServiceAccountName
		}
		pod.Spec.NodeSelector = merge(pod.Spec.NodeSelector, own.Spec.NodeSelector)
		for _, v := range own.Spec.Volumes {
			addVolume(pod, v)
		}
		overlayContainer(&pod.Spec.Containers[0], &own.Spec.Containers[0])
	}
}

// overlayContainer lays own over Spark's container c.
func overlayContainer(c, own *corev1.Container) {
	c.Name, c.Image, c.ImagePullPolicy = own.Name, own.Image, own.ImagePullPolicy
	c.Command, c.Args = own.Command, own.Args
	if own.TerminationMessagePolicy != "" {
		// How a failed driver's reason reaches submit (FallbackToLogsOnError).
		c.TerminationMessagePolicy = own.TerminationMessagePolicy
	}
	for _, p := range own.Ports {
		replaced := false
		for i := range c.Ports {
			if c.Ports[i].Name == p.Name || c.Ports[i].ContainerPort == p.ContainerPort {
				c.Ports[i], replaced = p, true
			}
		}
		if !replaced {
			c.Ports = append(c.Ports, p)
		}
	}
	setEnv(c, own.Env...)
	for _, m := range own.VolumeMounts {
		addMount(c, m)
	}
	c.Resources.Requests = mergeResources(c.Resources.Requests, own.Resources.Requests)
	c.Resources.Limits = mergeResources(c.Resources.Limits, own.Resources.Limits)
}

// merge returns base with over's entries on top (nil when both are empty).
func merge(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

func mergeResources(base, over corev1.ResourceList) corev1.ResourceList {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	maps.Copy(out, over)
	return out
}
