package kubeconf

// authmount.go names the Kubernetes Secret that carries the application's
// shared secret (spark.authenticate) to its pods, and says how a pod mounts
// it: the configuration names the file, never the value.

import (
	"path"

	corev1 "k8s.io/api/core/v1"
)

const (
	// KeyAuthSecretName names the Kubernetes Secret that holds the
	// application's spark.authenticate secret, under AuthSecretKey. Submit
	// sets it in a driver pod's configuration (the driver pod mounts the
	// Secret and its executor pods mount it too); when it is not set, a
	// driver with spark.authenticate on creates the Secret itself. Not a
	// Spark key.
	KeyAuthSecretName = "spark.sparkrpc.kubernetes.authenticate.secretName"
	// AuthSecretKey is the key of the secret in the Kubernetes Secret.
	AuthSecretKey = "auth-secret"
	// DriverOAuthTokenKey is the key, in the same Secret, of the driver
	// pod's spark.kubernetes.authenticate.driver.oauthToken (cluster mode),
	// which the driver pod alone mounts and names in
	// spark.kubernetes.authenticate.driver.oauthTokenFile, as Spark does.
	DriverOAuthTokenKey = "driver-oauth-token"
	// AuthSecretVolumeName is the pods' volume of the Secret.
	AuthSecretVolumeName = "spark-auth-secret"
	// AuthSecretMountPath is where the pods mount it: their
	// spark.authenticate.secret.file is AuthSecretMountPath/AuthSecretKey.
	AuthSecretMountPath = "/var/run/secrets/sparkrpc/auth"
)

// AuthSecretFile is the secret file of a pod that mounts the Secret.
var AuthSecretFile = path.Join(AuthSecretMountPath, AuthSecretKey)

// AuthVolume is the pods' volume of Secret name with keys (each a file of
// its name), mode 0400.
func AuthVolume(name string, keys ...string) corev1.Volume {
	mode := int32(0o400)
	items := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return corev1.Volume{Name: AuthSecretVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: name, DefaultMode: &mode, Items: items}}}
}

// AuthMount is the pods' read-only mount of AuthVolume at
// AuthSecretMountPath.
func AuthMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: AuthSecretVolumeName, MountPath: AuthSecretMountPath, ReadOnly: true}
}
