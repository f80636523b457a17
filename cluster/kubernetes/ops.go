package kubernetes

// ops.go is submit --kill and --status for Kubernetes (Spark's
// KubernetesSparkSubmitOperation): NAMESPACE:DRIVER_POD, with glob patterns.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrInvalidSubmissionID is matched by ParseSubmissionID's errors.
var ErrInvalidSubmissionID = errors.New("kubernetes: invalid submission id (want NAMESPACE:DRIVER_POD, glob patterns allowed)")

// ParseSubmissionID splits a submission id NAMESPACE:DRIVER_POD (the pod
// name may be a glob pattern; without NAMESPACE:, def is the namespace).
func ParseSubmissionID(id, def string) (namespace, pod string, err error) {
	ns, name, ok := strings.Cut(id, ":")
	if !ok {
		ns, name = def, id
	}
	if ns == "" || name == "" || strings.Contains(name, ":") || !kubeconf.IsDNSLabel(ns) {
		return "", "", fmt.Errorf("%w: %q", ErrInvalidSubmissionID, id)
	}
	if _, err := path.Match(name, ""); err != nil {
		return "", "", fmt.Errorf("%w: %q: %v", ErrInvalidSubmissionID, id, err)
	}
	return ns, name, nil
}

// ErrNoDriverPod is returned by Kill and Status when no driver pod matches.
var ErrNoDriverPod = errors.New("kubernetes: no driver pod matches")

func matchingDrivers(ctx context.Context, c *kubeclient.Client, ns, pattern string) ([]corev1.Pod, error) {
	lctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	l, err := c.CoreV1().Pods(ns).List(lctx, metav1.ListOptions{LabelSelector: kubeconf.LabelRole + "=" + kubeconf.RoleDriver})
	if err != nil {
		return nil, c.APIError(err, "list", "pods", ns)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ok, _ := path.Match(pattern, p.Name); ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %s:%s", ErrNoDriverPod, ns, pattern)
	}
	return out, nil
}

// Kill deletes the driver pods matching submissionID (their executor pods
// follow through their ownerReference), with the grace period
// spark.kubernetes.appKillPodDeletionGracePeriod if set.
func Kill(ctx context.Context, master cluster.Master, conf *actor.Conf, submissionID string, out io.Writer) error {
	c, ns, pattern, err := opClient(master, conf, submissionID)
	if err != nil {
		return err
	}
	pods, err := matchingDrivers(ctx, c, ns, pattern)
	if err != nil {
		return err
	}
	opts := metav1.DeleteOptions{}
	if v, ok := conf.Lookup(kubeconf.KeyAppKillPodDeletionGracePeriod); ok {
		d, err := conf.GetDuration(kubeconf.KeyAppKillPodDeletionGracePeriod, "0", time.Second)
		if err != nil || d < 0 {
			return kubeconf.Invalid(kubeconf.KeyAppKillPodDeletionGracePeriod, v, "must be a duration")
		}
		secs := int64(d / time.Second)
		opts.GracePeriodSeconds = &secs
	}
	for _, p := range pods {
		fmt.Fprintf(out, "Deleting driver pod %s:%s (application %s)\n", ns, p.Name, p.Labels[kubeconf.LabelAppSelector])
		dctx, cancel := context.WithTimeout(ctx, c.Timeout)
		err := c.CoreV1().Pods(ns).Delete(dctx, p.Name, opts)
		cancel()
		if err != nil && !apierrors.IsNotFound(err) {
			return c.APIError(err, "delete", "pods/"+p.Name, ns)
		}
	}
	return nil
}

// Status prints the state of the driver pods matching submissionID.
func Status(ctx context.Context, master cluster.Master, conf *actor.Conf, submissionID string, out io.Writer) error {
	c, ns, pattern, err := opClient(master, conf, submissionID)
	if err != nil {
		return err
	}
	pods, err := matchingDrivers(ctx, c, ns, pattern)
	if err != nil {
		return err
	}
	for _, p := range pods {
		fmt.Fprintf(out, "Application status (driver):\n\t pod name: %s\n\t namespace: %s\n\t application id: %s\n\t labels: %s\n\t pod uid: %s\n\t creation time: %s\n\t service account name: %s\n\t node name: %s\n\t phase: %s\n\t state: %s\n",
			p.Name, p.Namespace, p.Labels[kubeconf.LabelAppSelector], formatLabels(p.Labels), p.UID, p.CreationTimestamp.UTC().Format(time.RFC3339),
			p.Spec.ServiceAccountName, orNA(p.Spec.NodeName), p.Status.Phase, describeDriver(&p))
	}
	return nil
}

func opClient(master cluster.Master, conf *actor.Conf, id string) (*kubeclient.Client, string, string, error) {
	if master.Kind != cluster.MasterKubernetes {
		return nil, "", "", fmt.Errorf("%w: %q is not a k8s:// master", cluster.ErrInvalidMaster, master.String())
	}
	if conf == nil {
		conf = actor.NewConf()
	}
	ns, pattern, err := ParseSubmissionID(id, conf.Get(kubeconf.KeyNamespace, "default"))
	if err != nil {
		return nil, "", "", err
	}
	c, err := kubeclient.New(conf, kubeclient.Options{Server: master.APIServer})
	if err != nil {
		return nil, "", "", err
	}
	return c, ns, pattern, nil
}

func formatLabels(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+" -> "+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}
