package podspec

// executortemplate.go is the step that carries the executors' pod template
// into the driver pod in cluster mode (Spark's PodTemplateConfigMapStep):
// the template's file is on the submitting machine, the driver that
// creates the executor pods runs in the pod.

import (
	"path"

	corev1 "k8s.io/api/core/v1"
)

// The driver pod holds the executors' template in annotation
// ExecutorTemplateAnnotation, which a Downward API volume mounts as file
// ExecutorTemplateFile. An annotation, not a ConfigMap as in Spark: no
// other object to create, own and delete, nor a permission to create it.
const (
	ExecutorTemplateAnnotation = "sparkrpc.io/executor-pod-template"
	ExecutorTemplateDir        = "/opt/spark/pod-template"
	executorTemplateVolume     = "pod-template-volume"
	executorTemplateName       = "pod-spec-template.yml"
)

// ExecutorTemplateFile is the executors' template's file in the driver pod.
var ExecutorTemplateFile = path.Join(ExecutorTemplateDir, executorTemplateName)

// CarryExecutorTemplate puts template (the executors' template, YAML) in
// the driver pod at ExecutorTemplateFile.
func CarryExecutorTemplate(template []byte) Step {
	return func(pod *corev1.Pod) {
		pod.Annotations = merge(pod.Annotations, map[string]string{ExecutorTemplateAnnotation: string(template)})
		addVolume(pod, corev1.Volume{Name: executorTemplateVolume, VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: executorTemplateName,
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['" + ExecutorTemplateAnnotation + "']"}}}}}})
		addMount(&pod.Spec.Containers[0], corev1.VolumeMount{Name: executorTemplateVolume, MountPath: ExecutorTemplateDir, ReadOnly: true})
	}
}
