package kubernetes

import (
	"slices"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
)

// In cluster mode the driver pod
// creates the executor pods from the configuration it gets as --conf
// arguments. The executors' Secret mounts, variables from Secrets' keys and
// the image pull secrets are keys whose values name Secrets (no secret
// value), so they must reach the driver pod, and through it the executor
// pods, as in client mode (and as Spark, whose driver gets every key). Before,
// the redaction regex, which their names match, kept them from the driver
// pod: the executors got no mounts, no variables and no pull secrets.
func TestClusterModeExecutorsGetTheKeysThatNameSecrets(t *testing.T) {
	conf := actor.NewConf().Set(kubeconf.KeyContainerImage, "img").
		Set(kubeconf.ExecutorKeys.SecretsPrefix+"creds", "/etc/creds").
		Set(kubeconf.ExecutorKeys.SecretKeyRefPrefix+"DB_PASSWORD", "db:password").
		Set(kubeconf.KeyImagePullSecrets, "registry")
	kcfg, err := kubeconf.Parse(conf, "spark-1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cluster.ParseMaster("k8s://https://127.0.0.1:6443")
	pod, _, dropped, err := driverPod(cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf}, kcfg, "app-driver", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) > 0 {
		t.Errorf("keys not passed to the driver pod: %v", dropped)
	}
	// The driver in the pod reads its --conf arguments (up to "--").
	inPod := actor.NewConf()
	args := pod.Spec.Containers[0].Args
	for i := 0; i+1 < len(args) && args[i] != "--"; i++ {
		if args[i] == "--conf" {
			k, v, _ := strings.Cut(args[i+1], "=")
			inPod.Set(k, v)
		}
	}
	dcfg, err := kubeconf.Parse(inPod, "spark-1")
	if err != nil {
		t.Fatal(err)
	}
	ep := executorpods.Pod(dcfg, 1, "spark://x@h:1", "", nil)
	if !slices.ContainsFunc(ep.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/creds" }) {
		t.Errorf("executor pod of the driver pod: no mount of Secret creds at /etc/creds: %v", ep.Spec.Containers[0].VolumeMounts)
	}
	if !slices.ContainsFunc(ep.Spec.Containers[0].Env, func(e corev1.EnvVar) bool {
		return e.Name == "DB_PASSWORD" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "db"
	}) {
		t.Errorf("executor pod of the driver pod: no DB_PASSWORD from Secret db: %v", ep.Spec.Containers[0].Env)
	}
	if !slices.Contains(ep.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: "registry"}) {
		t.Errorf("executor pod of the driver pod: image pull secrets %v, want registry", ep.Spec.ImagePullSecrets)
	}
}
