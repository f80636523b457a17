package kubernetes

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The namespace's ResourceQuota
// is used up by another application's pod when the job is submitted (a
// shared namespace, a busy hour). That is the back-pressure the allocator
// retries, not a property of the job: the submission must start and wait
// for the quota as Spark's does, its executor pod created once the quota
// frees, and SparkPi give its exact result. Before, the submission's dry run
// took the refusal for a pod the namespace can never take, and failed.
func TestKubernetesQuotaUsedUpAtSubmit(t *testing.T) {
	c := needCluster(t)
	ns := quotaNamespace(t, c, "one-pod", 1)
	// The quota controller's count (the control plane runs none): used pods.
	setUsed := func(n string) {
		testutil.Eventually(t, time.Minute, "the quota's usage set to "+n, func() bool {
			q, err := c.CoreV1().ResourceQuotas(ns).Get(context.Background(), "one-pod", metav1.GetOptions{})
			if err != nil {
				return false
			}
			q.Status.Used = corev1.ResourceList{corev1.ResourcePods: resource.MustParse(n)}
			_, err = c.CoreV1().ResourceQuotas(ns).UpdateStatus(context.Background(), q, metav1.UpdateOptions{})
			return err == nil
		})
	}
	setUsed("1") // another application's pod
	conf := e2eConf(t, 1)
	conf.Set(cluster.KeyAppID, kubeconf.NewAppID()).Set(kubeconf.KeyNamespace, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		stdout, stderr *syncBuffer
		err            error
	}
	done := make(chan result, 1)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	go func() {
		m, err := cluster.ParseMaster("k8s://" + controlPlane.Server())
		if err == nil {
			err = submitTo(ctx, m, conf, stdout, stderr, "SparkPi", "2")
		}
		done <- result{stdout, stderr, err}
	}()
	var early *result
	testutil.Eventually(t, time.Minute, "the executor pod refused by the quota, and retried", func() bool {
		select {
		case r := <-done:
			early = &r
			return true
		default:
		}
		return strings.Contains(stderr.String(), `ResourceQuota "one-pod" is used up`)
	})
	if early != nil {
		t.Fatalf("submit ended while the quota was used up: %v\n%s", early.err, early.stderr)
	}
	setUsed("0") // the other application's pod ended
	r := <-done
	if r.err != nil {
		t.Fatalf("submit: %v\n%s", r.err, r.stderr)
	}
	checkPi(t, r.stdout.String(), 2)
}
