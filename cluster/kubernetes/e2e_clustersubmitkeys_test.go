package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// clusterConf is an in-process cluster-mode submission's configuration on
// the test cluster (as clusterArgs): the driver pod authenticates with the
// admin token from a file, so the review of its account is skipped.
func clusterConf(t *testing.T, prefix string) *actor.Conf {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(controlPlane.AdminToken()), 0o600); err != nil {
		t.Fatal(err)
	}
	return actor.NewConf().
		Set(cluster.KeyDeployMode, "cluster").
		Set(cluster.KeyNumExecutors, "1").
		Set(cluster.KeyExecutorMemory, "512m").
		Set(kubeconf.KeyContainerImage, "sparkrpc:test").
		Set(kubeconf.KeyExecutorPodNamePrefix, prefix).
		Set(kubeconf.KeyBatchDelay, "100ms").
		Set(kubeconf.KeyAuthDriverPrefix+kubeconf.AuthOAuthTokenFile, tok).
		Set(kubeconf.KeyAuthDriverPrefix+kubeconf.AuthCACertFile, controlPlane.CAFile())
}

// submitNoPanic is submit, with a panic of Submit turned into an error.
func submitNoPanic(ctx context.Context, t *testing.T, conf *actor.Conf) (stderr *syncBuffer, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Submit panicked: %v", r)
		}
	}()
	_, stderr, err = submit(ctx, t, conf, "SparkPi", "2")
	return stderr, err
}

// deleteDriverPod deletes the driver pod name when the test ends; its
// service, Secret and executor pods go with it.
func deleteDriverPod(t *testing.T, c kubernetes.Interface, name string) {
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

// noDriverPod fails the test when driver pod name exists.
func noDriverPod(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	_, err := c.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err == nil {
		t.Errorf("driver pod %s was created for a configuration submit should have refused", name)
	} else if !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

// TestKubernetesClusterSubmitRefusesBadKeys: in cluster mode, a documented
// spark.kubernetes.* key with a bad value is a typed configuration error
// at submit, before any pod exists. Before, a report interval of 0 made
// submit panic with the driver pod running, the other keys were checked
// only by the driver pod once it ran, and a bad connection timeout was
// reported under the request timeout's key.
func TestKubernetesClusterSubmitRefusesBadKeys(t *testing.T) {
	c := needCluster(t)
	bad := []struct{ name, key, value string }{
		{"report interval 0", kubeconf.KeyReportInterval, "0"},
		{"serviceHost not a boolean", kubeconf.KeyDriverServiceHost, "yes"},
		{"driver request timeout 0", kubeconf.KeyDriverRequestTimeout, "0"},
		{"driver connection timeout 0", kubeconf.KeyDriverConnectionTimeout, "0"},
		{"submission connection timeout 0", kubeconf.KeySubmissionConnectionTimeout, "0"},
	}
	for i, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			prefix := fmt.Sprintf("bc%d-%d", time.Now().UnixNano()%1e9, i)
			deleteDriverPod(t, c, prefix+"-driver")
			conf := clusterConf(t, prefix).Set(b.key, b.value)
			stderr, err := submitNoPanic(testutil.Context(t, time.Minute), t, conf)
			var ce *actor.ConfError
			if !errors.Is(err, kubeconf.ErrInvalidConfig) || !errors.As(err, &ce) || ce.Key != b.key {
				t.Errorf("Submit with %s=%s = %v; want an error matching kubeconf.ErrInvalidConfig naming the key\n%s", b.key, b.value, err, stderr)
			}
			noDriverPod(t, c, prefix+"-driver")
		})
	}
}
