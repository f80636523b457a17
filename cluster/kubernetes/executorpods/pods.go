package executorpods

// pods.go builds the executor pods: sparkrpc's own pod (Spark's
// BasicExecutorFeatureStep: names, labels, resources, command line and
// environment) shaped by package podspec's steps (the pod template,
// volumes, secrets, ..., least privilege). It does no I/O.

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/podspec"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodName returns executor id's pod name, <prefix>-exec-<id>.
func PodName(prefix string, id int64) string {
	return prefix + "-exec-" + strconv.FormatInt(id, 10)
}

// Selector returns the label selector of an application's executor
// pods: spark-app-selector=<appID>,spark-role=executor.
func Selector(appID string) string {
	return kubeconf.LabelAppSelector + "=" + appID + "," + kubeconf.LabelRole + "=" + kubeconf.RoleExecutor
}

// Pod returns the pod of executor id of c's application, for the driver at
// driverURL. logURL, when not "", is where its log can be read (the
// driver UI's route, SPARK_LOG_URL_LOG). Its container gets Spark's
// executor attributes as SPARK_EXECUTOR_ATTRIBUTE_* variables: APP_ID,
// EXECUTOR_ID, and from the Downward API KUBERNETES_POD_NAME,
// KUBERNETES_NAMESPACE and HOSTNAME (the pod's IP, its --hostname). owner, when not nil, becomes the pod's controller
// ownerReference (the driver pod in cluster mode), so that deleting the
// driver pod deletes it. The pod has the shape of c.Executor (podspec.Pod);
// without spark.kubernetes.authenticate.executor.serviceAccountName it
// mounts no service account token (executors never call the API server).
func Pod(c *kubeconf.Config, id int64, driverURL, logURL string, owner *metav1.OwnerReference) *corev1.Pod {
	name := PodName(c.PodNamePrefix, id)
	sid := strconv.FormatInt(id, 10)
	labels := maps.Clone(c.ExecutorLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[kubeconf.LabelAppSelector] = c.AppID
	labels[kubeconf.LabelAppName] = kubeconf.AppNameLabel(c.AppName)
	labels[kubeconf.LabelRole] = kubeconf.RoleExecutor
	labels[kubeconf.LabelExecutorID] = sid
	labels[kubeconf.LabelProfileID] = "0"
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
				Name:            kubeconf.ExecutorContainerName,
				Image:           c.ExecutorImage,
				ImagePullPolicy: corev1.PullPolicy(c.PullPolicy),
				Command:         []string{c.Executable},
				Args: append([]string{"executor",
					"--driver-url", driverURL,
					"--executor-id", sid,
					"--hostname", "$(" + kubeconf.EnvExecutorPodIP + ")",
					"--cores", strconv.Itoa(c.ExecutorCores),
					"--app-id", c.AppID,
					"--resourceProfileId", "0"}, kubeconf.Args(c.ExecutorConf)...),
				Env: []corev1.EnvVar{
					{Name: "SPARK_DRIVER_URL", Value: driverURL},
					{Name: "SPARK_EXECUTOR_CORES", Value: strconv.Itoa(c.ExecutorCores)},
					{Name: "SPARK_EXECUTOR_MEMORY", Value: fmt.Sprintf("%dm", c.ExecutorMemoryMiB)},
					{Name: "SPARK_APPLICATION_ID", Value: c.AppID},
					{Name: "SPARK_EXECUTOR_ID", Value: sid},
					{Name: "SPARK_EXECUTOR_POD_NAME", Value: name},
					{Name: kubeconf.EnvExecutorPodIP, ValueFrom: fieldRef("status.podIP")},
					{Name: attributeEnv + "APP_ID", Value: c.AppID},
					{Name: attributeEnv + "EXECUTOR_ID", Value: sid},
					{Name: attributeEnv + "HOSTNAME", ValueFrom: fieldRef("status.podIP")},
					{Name: attributeEnv + "KUBERNETES_NAMESPACE", ValueFrom: fieldRef("metadata.namespace")},
					{Name: attributeEnv + "KUBERNETES_POD_NAME", ValueFrom: fieldRef("metadata.name")},
				},
				Resources: res,
			}},
		},
	}
	if logURL != "" {
		pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "SPARK_LOG_URL_LOG", Value: logURL})
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	if c.AuthSecretName != "" {
		pod.Spec.Volumes = append(pod.Spec.Volumes, kubeconf.AuthVolume(c.AuthSecretName, kubeconf.AuthSecretKey))
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, kubeconf.AuthMount())
	}
	return podspec.Pod(c.Executor, pod, podspec.NoTokenUnless(c.ExecutorServiceAccount != ""))
}

// attributeEnv prefixes the variables an executor reads its attributes
// from (Spark's SPARK_EXECUTOR_ATTRIBUTE_).
const attributeEnv = "SPARK_EXECUTOR_ATTRIBUTE_"

// fieldRef is a Downward API reference to the pod's field path.
func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
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
