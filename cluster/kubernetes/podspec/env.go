package podspec

// env.go holds the step that sets variables of Spark's container (Spark's
// driverEnv and executorEnv, and its EnvSecretsFeatureStep).

import corev1 "k8s.io/api/core/v1"

// Env sets vars in Spark's container, over variables of the same name.
func Env(vars []corev1.EnvVar) Step {
	return func(pod *corev1.Pod) {
		for _, v := range vars {
			setEnv(&pod.Spec.Containers[0], *v.DeepCopy())
		}
	}
}
