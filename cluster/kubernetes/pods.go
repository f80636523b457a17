package kubernetes

// pods.go builds the executor pods (Spark's BasicExecutorFeatureStep): their
// names, labels, resources, command line and environment. It does no I/O.

import (
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func checkQuantity(s string) error {
	_, err := resource.ParseQuantity(s)
	return err
}

// ExecutorPodName returns executor id's pod name, <prefix>-exec-<id>.
func ExecutorPodName(prefix string, id int64) string {
	return prefix + "-exec-" + strconv.FormatInt(id, 10)
}

// ExecutorSelector returns the label selector of an application's executor
// pods: spark-app-selector=<appID>,spark-role=executor.
func ExecutorSelector(appID string) string {
	return LabelAppSelector + "=" + appID + "," + LabelRole + "=" + RoleExecutor
}

// ExecutorPod returns the pod of executor id for the driver at driverURL.
// owner, when not nil, becomes the pod's controller ownerReference (the
// driver pod in cluster mode), so that deleting the driver pod deletes it.
func (c *config) executorPod(id int64, driverURL string, owner *metav1.OwnerReference) *corev1.Pod {
	name := ExecutorPodName(c.PodNamePrefix, id)
	sid := strconv.FormatInt(id, 10)
	labels := maps.Clone(c.ExecutorLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelAppSelector] = c.AppID
	labels[LabelAppName] = AppNameLabel(c.AppName)
	labels[LabelRole] = RoleExecutor
	labels[LabelExecutorID] = sid
	labels[LabelProfileID] = "0"
	mem := resource.MustParse(fmt.Sprintf("%dMi", c.ExecutorMemoryMiB+c.ExecutorOverheadMiB))
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: mem, corev1.ResourceCPU: resource.MustParse(c.ExecutorRequestCores)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
	}
	if c.ExecutorLimitCores != "" {
		res.Limits[corev1.ResourceCPU] = resource.MustParse(c.ExecutorLimitCores)
	}
	sa := c.ExecutorServiceAccount
	if sa == "" {
		sa = c.ServiceAccount
	}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   c.Namespace,
			Labels:      labels,
			Annotations: maps.Clone(c.ExecutorAnnotations),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:      corev1.RestartPolicyNever,
			Hostname:           hostnameOf(name),
			NodeSelector:       maps.Clone(c.NodeSelector),
			ServiceAccountName: sa,
			Containers: []corev1.Container{{
				Name:            ExecutorContainerName,
				Image:           c.ExecutorImage,
				ImagePullPolicy: corev1.PullPolicy(c.PullPolicy),
				Command:         []string{c.Executable},
				Args: append([]string{"executor",
					"--driver-url", driverURL,
					"--executor-id", sid,
					"--hostname", "$(" + EnvExecutorPodIP + ")",
					"--cores", strconv.Itoa(c.ExecutorCores),
					"--app-id", c.AppID,
					"--resourceProfileId", "0"}, confArgs(c.ExecutorConf)...),
				Env: []corev1.EnvVar{
					{Name: "SPARK_DRIVER_URL", Value: driverURL},
					{Name: "SPARK_EXECUTOR_CORES", Value: strconv.Itoa(c.ExecutorCores)},
					{Name: "SPARK_EXECUTOR_MEMORY", Value: fmt.Sprintf("%dm", c.ExecutorMemoryMiB)},
					{Name: "SPARK_APPLICATION_ID", Value: c.AppID},
					{Name: "SPARK_EXECUTOR_ID", Value: sid},
					{Name: "SPARK_EXECUTOR_POD_NAME", Value: name},
					{Name: EnvExecutorPodIP, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
				},
				Resources: res,
			}},
		},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	if c.AuthSecretName != "" {
		pod.Spec.Volumes = append(pod.Spec.Volumes, authVolume(c.AuthSecretName, AuthSecretKey))
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, authMount())
	}
	return pod
}

// hostnameOf is Spark's executor hostname: the last 63 characters of the
// pod name, without leading non-word characters.
func hostnameOf(name string) string {
	if len(name) > 63 {
		name = name[len(name)-63:]
	}
	for len(name) > 0 && !isWordChar(name[0]) {
		name = name[1:]
	}
	return name
}

func isWordChar(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// ownerReferenceTo returns the controller ownerReference to pod.
func ownerReferenceTo(pod *corev1.Pod) *metav1.OwnerReference {
	ctrl := true
	return &metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &ctrl}
}
