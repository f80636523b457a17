package podspec

// mounts.go holds the steps that mount volumes in Spark's container: the
// volumes of the keys (Spark's MountVolumesFeatureStep), Secrets (Spark's
// MountSecretsFeatureStep) and the local directory (Spark's
// LocalDirsFeatureStep).

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
)

// LocalDirName is the emptyDir volume of Spark's container's working
// directory, mounted at LocalDirPath: the container's one writable place
// when its root file system is read-only (the files an application adds
// are fetched there).
const (
	LocalDirName = "spark-local-dir-1"
	LocalDirPath = "/var/data/spark-local-dir-1"
	// EnvLocalDirs names the local directories, as in Spark.
	EnvLocalDirs = "SPARK_LOCAL_DIRS"
)

// Volumes mounts vols in Spark's container.
func Volumes(vols []kubeconf.Volume) Step {
	return func(pod *corev1.Pod) {
		for _, v := range vols {
			addVolume(pod, *v.Volume.DeepCopy())
			addMount(&pod.Spec.Containers[0], v.Mount)
		}
	}
}

// Secrets mounts each Secret, read-only, at its path in Spark's container,
// as volume SecretVolumeName(name).
func Secrets(secrets []kubeconf.SecretMount) Step {
	return func(pod *corev1.Pod) {
		for _, s := range secrets {
			name := SecretVolumeName(s.Name)
			addVolume(pod, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s.Name}}})
			addMount(&pod.Spec.Containers[0], corev1.VolumeMount{Name: name, MountPath: s.Path, ReadOnly: true})
		}
	}
}

// LocalDir mounts an emptyDir volume at LocalDirPath, names it in
// EnvLocalDirs and makes it the working directory of Spark's container
// when the template gives none. A template volume mounted there is kept.
func LocalDir() Step {
	return func(pod *corev1.Pod) {
		c := &pod.Spec.Containers[0]
		for _, m := range c.VolumeMounts {
			if m.MountPath == LocalDirPath {
				return
			}
		}
		addVolume(pod, corev1.Volume{Name: LocalDirName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		addMount(c, corev1.VolumeMount{Name: LocalDirName, MountPath: LocalDirPath})
		setEnv(c, corev1.EnvVar{Name: EnvLocalDirs, Value: LocalDirPath})
		if c.WorkingDir == "" {
			c.WorkingDir = LocalDirPath
		}
	}
}

// SecretVolumeName is the name of the volume of Secret name: <name>-volume
// (Spark's) when that is a DNS label of at most 63 characters, as volume
// names must be; otherwise, for a Secret named with dots or at length, its
// name with dots made dashes, cut to fit, and a digest of the whole name,
// so that two Secrets get two volumes.
func SecretVolumeName(name string) string {
	const suffix = "-volume"
	if v := name + suffix; len(v) <= 63 && kubeconf.IsDNSLabel(v) {
		return v
	}
	sum := sha256.Sum256([]byte(name))
	tail := "-" + hex.EncodeToString(sum[:4]) + suffix
	base := strings.ReplaceAll(name, ".", "-")
	if len(base) > 63-len(tail) {
		base = base[:63-len(tail)]
	}
	return strings.TrimRight(base, "-") + tail
}
