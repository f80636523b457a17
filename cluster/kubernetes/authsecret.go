package kubernetes

// authsecret.go carries the application's shared secret (spark.authenticate)
// to its pods as Spark on Kubernetes does: a Kubernetes Secret holding it,
// mounted by the driver pod and the executor pods, whose configuration names
// the file (spark.authenticate.secret.file) and never the value.

import (
	"context"
	"errors"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/netty"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// authEnabled reports spark.authenticate.
func authEnabled(conf *actor.Conf) (bool, error) {
	on, err := conf.GetBool(netty.KeyAuthenticate, false)
	return on, kubeconf.WrapInvalid(err)
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
		return nil, false, kubeconf.WrapInvalid(err)
	}
	if s, err = cluster.GenerateSecret(); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// AuthSecretName is the name of the Secret of the application whose
// resources are named with prefix.
func AuthSecretName(prefix string) string { return prefix + "-auth-secret" }

// authSecret is the Kubernetes Secret of c's application holding data
// (kubeconf.AuthSecretKey: the shared secret; kubeconf.DriverOAuthTokenKey:
// the driver pod's token), labelled with the application's labels.
func authSecret(c *kubeconf.Config, name string, data map[string][]byte) *corev1.Secret {
	immutable := true
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: map[string]string{
			kubeconf.LabelAppSelector: c.AppID, kubeconf.LabelAppName: kubeconf.AppNameLabel(c.AppName)}},
		Type:      corev1.SecretTypeOpaque,
		Immutable: &immutable,
		Data:      data,
	}
}

// executorStartupConf is the configuration executor pods are started with
// (as --conf arguments), before they fetch the driver's: the keys that must
// agree before they can connect (spark.auth*, spark.network.*, spark.rpc.*,
// spark.ssl.*), without sensitive keys, and with the mounted secret file
// when secretName is set.
func executorStartupConf(conf *actor.Conf, red *redactor, secretName string) map[string]string {
	out := map[string]string{}
	for k, v := range conf.All() {
		if cluster.IsConnectionKey(k) && !red.sensitive(k) {
			out[k] = v
		}
	}
	if secretName != "" {
		out[netty.KeyAuthenticate] = "true"
		out[netty.KeyAuthenticateSecretFile] = kubeconf.AuthSecretFile
	}
	return out
}

// driverAuth is what a driver with spark.authenticate on set up: the
// Secret its executor pods mount, and, when the driver created it, how to
// delete it at the end.
type driverAuth struct {
	created bool
	name    string
}

// setupDriverAuth prepares the executors' authentication for a driver
// running here: with spark.authenticate on and no
// kubeconf.KeyAuthSecretName (client mode), it takes the given secret or generates one (kept in conf, in
// memory, for the driver itself), creates the Secret (owned by owner, the
// driver pod, when there is one) and sets kcfg's executor configuration.
func setupDriverAuth(ctx context.Context, conf *actor.Conf, kcfg *kubeconf.Config, client *kubeclient.Client, owner *metav1.OwnerReference) (*driverAuth, error) {
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
	da := &driverAuth{name: conf.Get(kubeconf.KeyAuthSecretName, "")}
	if da.name == "" {
		secret, generated, err := appAuthSecret(conf)
		if err != nil {
			return nil, err
		}
		if generated {
			conf.Set(netty.KeyAuthenticateSecret, string(secret)) // for the driver's own env, in memory only
		}
		da.name = AuthSecretName(kcfg.PodNamePrefix)
		s := authSecret(kcfg, da.name, map[string][]byte{kubeconf.AuthSecretKey: secret})
		if owner != nil {
			s.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		cctx, cancel := context.WithTimeout(ctx, client.Timeout)
		_, err = client.CoreV1().Secrets(kcfg.Namespace).Create(cctx, s, metav1.CreateOptions{})
		cancel()
		if err != nil {
			return nil, client.APIError(err, "create", "secrets", kcfg.Namespace)
		}
		da.created = true
	}
	kcfg.AuthSecretName = da.name
	kcfg.ExecutorConf = executorStartupConf(conf, red, da.name)
	return da, nil
}

// cleanup deletes the Secret the driver created.
func (da *driverAuth) cleanup(client *kubeclient.Client, namespace string) error {
	if da == nil || !da.created {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), client.Timeout)
	defer cancel()
	return client.APIError(client.CoreV1().Secrets(namespace).Delete(ctx, da.name, metav1.DeleteOptions{}), "delete", "secrets/"+da.name, namespace)
}
