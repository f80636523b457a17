package kubernetes

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubernetesUnpullableDriverImage: a driver pod whose image cannot be
// pulled ends a cluster-mode submission within a bounded time, with an
// error naming the reason and the image, and the pod is deleted. Before,
// the pod stayed Pending and submit waited for ever.
func TestKubernetesUnpullableDriverImage(t *testing.T) {
	c := needCluster(t)
	const image = "unpullable/sparkrpc-driver:test"
	prefix := fmt.Sprintf("ud%d", time.Now().UnixNano()%1e9)
	deleteDriverPod(t, c, prefix+"-driver")
	conf := clusterConf(t, prefix).Set(kubeconf.KeyDriverContainerImage, image)
	ctx := testutil.Context(t, 90*time.Second)
	start := time.Now()
	stderr, err := submitNoPanic(ctx, t, conf)
	if !errors.Is(err, ErrDriverFailed) || !strings.Contains(err.Error(), "ErrImagePull") && !strings.Contains(err.Error(), "ImagePullBackOff") ||
		!strings.Contains(err.Error(), image) {
		t.Fatalf("Submit = %v after %s; want ErrDriverFailed naming the pull failure and the image\n%s", err, time.Since(start).Round(time.Second), stderr)
	}
	t.Logf("Submit = %v after %s\n%s", err, time.Since(start).Round(time.Millisecond), stderr)
	// Nothing is left waiting for an image that does not come.
	testutil.Eventually(t, 30*time.Second, "the driver pod to be deleted", func() bool {
		_, err := c.CoreV1().Pods("default").Get(ctx, prefix+"-driver", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
