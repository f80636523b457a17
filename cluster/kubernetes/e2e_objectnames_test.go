package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubernetesObjectNames: names Kubernetes accepts for the objects a
// user names are usable: a Secret whose name is a DNS subdomain with a dot,
// or of 60 characters, mounted with spark.kubernetes.executor.secrets.NAME;
// a driver pod named with a dot (spark.kubernetes.driver.pod.name) gets its
// headless service. Before, the API server refused the pods' volumes
// (<name>-volume is not a DNS label) and, once the driver pod was created,
// its service.
func TestKubernetesObjectNames(t *testing.T) {
	c := needCluster(t)
	t.Run("secret names", func(t *testing.T) {
		n := time.Now().UnixNano() % 1e9
		names := []string{fmt.Sprintf("db.creds-%d", n), fmt.Sprintf("team-analytics-warehouse-readonly-credentials-%014d", n)}
		conf := e2eConf(t, 1)
		for i, name := range names {
			if len(name) != 60 && i == 1 {
				t.Fatalf("name %q has %d characters", name, len(name))
			}
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"k": "v"}}
			if _, err := c.CoreV1().Secrets("default").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.CoreV1().Secrets("default").Delete(context.Background(), name, metav1.DeleteOptions{}) })
			conf.Set(kubeconf.ExecutorKeys.SecretsPrefix+name, fmt.Sprintf("/etc/secret-%d", i))
		}
		stdout, stderr, err := submit(testutil.Context(t, 2*time.Minute), t, conf, "SparkPi", "2")
		if err != nil {
			t.Fatalf("submit with Secrets %q mounted: %v\n%s", names, err, stderr)
		}
		checkPi(t, stdout.String(), 2)
	})
	t.Run("driver pod name with a dot", func(t *testing.T) {
		prefix := fmt.Sprintf("dn%d", time.Now().UnixNano()%1e9)
		name := "etl." + prefix + "-driver"
		deleteDriverPod(t, c, name)
		conf := clusterConf(t, prefix).Set(kubeconf.KeyDriverPodName, name).Set(kubeconf.KeyWaitAppCompletion, "false")
		stderr, err := submitNoPanic(testutil.Context(t, time.Minute), t, conf)
		if err != nil {
			t.Fatalf("Submit with %s=%s = %v\n%s", kubeconf.KeyDriverPodName, name, err, stderr)
		}
		l, err := c.CoreV1().Services("default").List(context.Background(), metav1.ListOptions{LabelSelector: kubeconf.LabelAppSelector + "=" + conf.Get(cluster.KeyAppID, "")})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("the driver's services: %v %v", l, err)
		}
	})
}
