package kubernetes

// authsecret.go carries the application's shared secret (spark.authenticate)
// to its pods as Spark on Kubernetes does: a Kubernetes Secret holding it,
// mounted by the driver pod and the executor pods, whose configuration names
// the file (spark.authenticate.secret.file) and never the value.

import (
	"context"
	"errors"
	"path"
	"sort"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/netty"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// authEnabled reports spark.authenticate.
func authEnabled(conf *actor.Conf) (bool, error) {
	on, err := conf.GetBool(netty.KeyAuthenticate, false)
	return on, wrapConf(err)
}

// appAuthSecret is the application's secret: the one conf gives
// (spark.authenticate.secret, or the file spark.authenticate.secret.file
// names), or, when none is given, a new one (32 random bytes, hex; generated
// is then true), as Spark on Kubernetes generates one per application.
func appAuthSecret(conf *actor.Conf) (secret []byte, generated bool, err error) {
	s, err := netty.AuthSecret(conf)
	if err == nil {
		return s, false, nil
	}
	if !errors.Is(err, netty.ErrNoSecret) {
		return nil, false, wrapConf(err)
	}
	if s, err = cluster.GenerateSecret(); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// AuthSecretName is the name of the Secret of the application whose
// resources are named with prefix.
func AuthSecretName(prefix string) string { return prefix + "-auth-secret" }

// authSecret is the Kubernetes Secret holding data (AuthSecretKey: the
// shared secret; DriverOAuthTokenKey: the driver pod's token), labelled
// with the application's labels.
func (c *config) authSecret(name string, data map[string][]byte) *corev1.Secret {
	immutable := true
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: map[string]string{
			LabelAppSelector: c.AppID, LabelAppName: AppNameLabel(c.AppName)}},
		Type:      corev1.SecretTypeOpaque,
		Immutable: &immutable,
		Data:      data,
	}
}

// authVolume is the pods' volume of Secret name with keys (each a file of
// its name), mode 0400.
func authVolume(name string, keys ...string) corev1.Volume {
	mode := int32(0o400)
	items := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return corev1.Volume{Name: AuthSecretVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: name, DefaultMode: &mode, Items: items}}}
}

func authMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: AuthSecretVolumeName, MountPath: AuthSecretMountPath, ReadOnly: true}
}

// executorStartupConf is the configuration executor pods are started with
// (as --conf arguments), before they fetch the driver's: the keys that must
// agree before they can connect (spark.auth*, spark.network.*, spark.rpc.*,
// spark.ssl.*), without sensitive keys, and with the mounted secret file
// when secretName is set.
func executorStartupConf(conf *actor.Conf, red *redactor, secretName string) map[string]string {
	out := map[string]string{}
	for k, v := range conf.All() {
		if (strings.HasPrefix(k, "spark.auth") || strings.HasPrefix(k, "spark.network.") || strings.HasPrefix(k, "spark.rpc.") ||
			strings.HasPrefix(k, "spark.ssl.")) && !red.sensitive(k) {
			out[k] = v
		}
	}
	if secretName != "" {
		out[netty.KeyAuthenticate] = "true"
		out[netty.KeyAuthenticateSecretFile] = AuthSecretFile
	}
	return out
}

// confArgs is conf as sorted "--conf K=V" arguments.
func confArgs(conf map[string]string) []string {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, "--conf", k+"="+conf[k])
	}
	return args
}

// driverAuth is what a driver with spark.authenticate on set up: the
// Secret its executor pods mount, and, when the driver created it, how to
// delete it at the end.
type driverAuth struct {
	created bool
	name    string
}

// setupDriverAuth prepares the executors' authentication for a driver
// running here: with spark.authenticate on and no KeyAuthSecretName (client
// mode), it takes the given secret or generates one (kept in conf, in
// memory, for the driver itself), creates the Secret (owned by owner, the
// driver pod, when there is one) and sets kcfg's executor configuration.
func setupDriverAuth(ctx context.Context, conf *actor.Conf, kcfg *config, client *apiClient, owner *metav1.OwnerReference) (*driverAuth, error) {
	red, err := newRedactor(conf)
	if err != nil {
		return nil, err
	}
	on, err := authEnabled(conf)
	if err != nil {
		return nil, err
	}
	if !on {
		kcfg.ExecutorConf = executorStartupConf(conf, red, "")
		return &driverAuth{}, nil
	}
	da := &driverAuth{name: conf.Get(KeyAuthSecretName, "")}
	if da.name == "" {
		secret, generated, err := appAuthSecret(conf)
		if err != nil {
			return nil, err
		}
		if generated {
			conf.Set(netty.KeyAuthenticateSecret, string(secret)) // for the driver's own env, in memory only
		}
		da.name = AuthSecretName(kcfg.PodNamePrefix)
		s := kcfg.authSecret(da.name, map[string][]byte{AuthSecretKey: secret})
		if owner != nil {
			s.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		cctx, cancel := context.WithTimeout(ctx, client.Timeout)
		_, err = client.CoreV1().Secrets(kcfg.Namespace).Create(cctx, s, metav1.CreateOptions{})
		cancel()
		if err != nil {
			return nil, client.apiError(err, "create", "secrets", kcfg.Namespace)
		}
		da.created = true
	}
	kcfg.AuthSecretName = da.name
	kcfg.ExecutorConf = executorStartupConf(conf, red, da.name)
	return da, nil
}

// cleanup deletes the Secret the driver created.
func (da *driverAuth) cleanup(client *apiClient, namespace string) error {
	if da == nil || !da.created {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), client.Timeout)
	defer cancel()
	return client.apiError(client.CoreV1().Secrets(namespace).Delete(ctx, da.name, metav1.DeleteOptions{}), "delete", "secrets/"+da.name, namespace)
}
