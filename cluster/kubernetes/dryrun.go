package kubernetes

// dryrun.go asks the API server, before submit creates anything, whether it
// would admit the application's pods: a dry run (DryRun: All) of the driver
// pod (cluster mode) and of one executor pod, which runs admission
// (PodSecurity, LimitRange, ResourceQuota, service accounts, webhooks)
// without storing anything.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrPodRejected is matched by submit's error when the API server's dry run
// of the driver pod or of an executor pod rejects it; the error's text has
// the API server's message.
var ErrPodRejected = errors.New("kubernetes: the API server rejects the pod")

// dryRunURL stands for the driver's URL in the executor pod of a dry run,
// which no process reads.
const dryRunURL = "spark://CoarseGrainedScheduler@dry-run.invalid:7078"

// dryRunPods creates, as a dry run, driver (when not nil) and one executor
// pod of c's application, and returns an error matching ErrPodRejected
// with the API server's message when it rejects either. The executor pod
// has no owner and a generated name: the driver pod it would belong to does
// not exist yet.
func dryRunPods(ctx context.Context, client *kubeclient.Client, c *kubeconf.Config, driver *corev1.Pod, out io.Writer) error {
	exec := executorpods.Pod(c, 1, dryRunURL, "", nil)
	exec.GenerateName, exec.Name = exec.Name[:len(exec.Name)-1], ""
	pods := []struct {
		what string
		pod  *corev1.Pod
	}{{"driver pod " + c.Namespace + ":" + podName(driver), driver}, {"executor pod " + c.Namespace + ":" + exec.GenerateName + "N", exec}}
	for _, p := range pods {
		if p.pod == nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, client.Timeout)
		_, err := client.CoreV1().Pods(c.Namespace).Create(cctx, p.pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		cancel()
		if err != nil && p.pod == exec && quotaUsedUp(client.APIError(err, "create (dry run)", "pods", c.Namespace)) {
			// The executor pods wait for the quota, as the allocator does.
			fmt.Fprintf(out, "The namespace's quota is used up for now; the executor pods wait for it: %v\n", err)
			continue
		}
		if err != nil {
			return dryRunError(client, c.Namespace, p.what, err)
		}
	}
	return nil
}

// dryRunError is the error of a dry run of what that failed with err: a
// rejection (ErrPodRejected) when the API server answered with a status
// that is not about the credential or a timeout, else the typed API error.
func dryRunError(client *kubeclient.Client, ns, what string, err error) error {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || apierrors.IsUnauthorized(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return client.APIError(err, "create (dry run)", "pods", ns)
	}
	return fmt.Errorf("%w: %s (dry run, nothing was created): %s (HTTP %d %s; %s=false skips this check)",
		ErrPodRejected, what, st.Status().Message, st.Status().Code, st.Status().Reason, kubeconf.KeySubmissionDryRun)
}

func podName(p *corev1.Pod) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// quotaFigures are the figures of a quota refusal: "requested: R, used: U,
// limited: L", each a comma-separated list of RESOURCE=QUANTITY.
var quotaFigures = regexp.MustCompile(`requested: (\S+), used: \S+, limited: (\S+)`)

// quotaUsedUp reports whether err is a ResourceQuota refusal that the pod
// passes once the namespace's usage drops: none of its requests is over
// the quota's hard limit.
func quotaUsedUp(err error) bool {
	var ae *kubeclient.APIError
	if !errors.Is(err, kubeclient.ErrQuotaExceeded) || !errors.As(err, &ae) {
		return false
	}
	m := quotaFigures.FindStringSubmatch(ae.Message)
	if m == nil {
		return false
	}
	requested, ok := quantities(m[1])
	limited, lok := quantities(m[2])
	if !ok || !lok {
		return false
	}
	for k, q := range requested {
		if l, ok := limited[k]; !ok || q.Cmp(l) > 0 {
			return false
		}
	}
	return true
}

// quantities parses a quota refusal's list of RESOURCE=QUANTITY, comma
// separated; ok is false when a quantity does not parse.
func quantities(list string) (map[string]resource.Quantity, bool) {
	out := map[string]resource.Quantity{}
	for kv := range strings.SplitSeq(list, ",") {
		k, v, _ := strings.Cut(kv, "=")
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, false
		}
		out[k] = q
	}
	return out, true
}
