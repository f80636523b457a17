package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// testNamespace creates a namespace for one test, waits for its default
// service account (which admission requires of a pod), and deletes it at
// the end.
func testNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	testutil.Eventually(t, time.Minute, "the namespace's default service account", func() bool {
		_, err := c.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

// TestKubernetesDryRunLimitRange: a LimitRange that forbids the pods'
// memory rejects the driver pod (cluster mode) and the executor pod (client
// mode) at submit, with the API server's message, before any pod exists;
// spark.sparkrpc.kubernetes.submission.dryRun=false skips the check.
func TestKubernetesDryRunLimitRange(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("dryrun%d", time.Now().UnixNano()%1e9)
	testNamespace(t, c, ns)
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}}}}
	if _, err := c.CoreV1().LimitRanges(ns).Create(ctx, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	noPods := func(what string) {
		t.Helper()
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 0 {
			t.Fatalf("%s: pods in %s: %v %v", what, ns, err, l)
		}
	}
	prefix := fmt.Sprintf("dr%d", time.Now().UnixNano()%1e9)
	args := append(clusterArgs(t, prefix), "--conf", kubeconf.KeyNamespace+"="+ns, "--class", "SparkPi", "spark-internal", "4")
	out, code := runSparkrpc(ctx, t, args...)
	if code == 0 || !strings.Contains(out, "rejects the pod: driver pod "+ns+":"+prefix+"-driver (dry run") ||
		!strings.Contains(out, "maximum memory usage per Container is 256Mi") || !strings.Contains(out, kubeconf.KeySubmissionDryRun+"=false") {
		t.Fatalf("cluster mode: exit %d:\n%s", code, out)
	}
	noPods("cluster mode")
	// Without the dry run the same refusal comes when the pod is created.
	out, code = runSparkrpc(ctx, t, append(clusterArgs(t, prefix), "--conf", kubeconf.KeyNamespace+"="+ns,
		"--conf", kubeconf.KeySubmissionDryRun+"=false", "--class", "SparkPi", "spark-internal", "4")...)
	if code == 0 || strings.Contains(out, "(dry run") || !strings.Contains(out, "maximum memory usage per Container is 256Mi") {
		t.Fatalf("cluster mode without the dry run: exit %d:\n%s", code, out)
	}
	noPods("cluster mode without the dry run")

	out, code = runSparkrpc(ctx, t, "submit", "--master", "k8s://"+controlPlane.Server(), "--num-executors", "2",
		"--executor-memory", "512m", "--conf", kubeconf.KeyNamespace+"="+ns, "--conf", kubeconf.KeyContainerImage+"=sparkrpc:test",
		"--conf", kubeconf.KeyExecutorPodNamePrefix+"="+prefix, "--class", "SparkPi", "spark-internal", "4")
	if code == 0 || !strings.Contains(out, "rejects the pod: executor pod "+ns+":"+prefix+"-exec-N (dry run") ||
		!strings.Contains(out, "maximum memory usage per Container is 256Mi") {
		t.Fatalf("client mode: exit %d:\n%s", code, out)
	}
	noPods("client mode")
}

// TestKubernetesDriverAccessReview: a driver service account that may do
// everything but list pods is reported at submit, with the fix, before the
// driver pod is created.
func TestKubernetesDriverAccessReview(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("review%d", time.Now().UnixNano()%1e9)
	testNamespace(t, c, ns)
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nolist"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "nolist"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""},
		Resources: []string{"pods"}, Verbs: []string{"create", "get", "watch", "delete", "deletecollection"}}}}
	if _, err := c.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "nolist"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nolist", Namespace: ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "nolist"}}
	if _, err := c.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("ar%d", time.Now().UnixNano()%1e9)
	out, code := runSparkrpc(ctx, t, "submit", "--master", "k8s://"+controlPlane.Server(), "--deploy-mode", "cluster",
		"--num-executors", "1", "--executor-memory", "512m",
		"--conf", kubeconf.KeyNamespace+"="+ns, "--conf", kubeconf.KeyContainerImage+"=sparkrpc:test",
		"--conf", kubeconf.KeyExecutorPodNamePrefix+"="+prefix, "--conf", kubeconf.KeyServiceAccountName+"=nolist",
		"--class", "SparkPi", "spark-internal", "4")
	for _, want := range []string{"system:serviceaccount:" + ns + ":nolist may not", "list pods", "deploy/kubernetes/rbac.yaml",
		kubeconf.KeyServiceAccountName + "=sparkrpc-driver"} {
		if code == 0 || !strings.Contains(out, want) {
			t.Fatalf("want %q: exit %d:\n%s", want, code, out)
		}
	}
	if strings.Contains(out, "create pods") || strings.Contains(out, "watch pods") {
		t.Errorf("a permission the account has is reported missing:\n%s", out)
	}
	if l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("pods in %s: %v %v", ns, err, l)
	}
}

// TestKubernetesDriverFailureAndEvents: a driver pod that fails has its
// reason (the last lines of its log) printed by submit; the driver posts
// Events on its pod for its milestones, read back from the API server, for
// an application that succeeds and one that fails.
func TestKubernetesDriverFailureAndEvents(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("ev%d", time.Now().UnixNano()%1e9)
	out, code := runSparkrpc(ctx, t, append(clusterArgs(t, prefix), "--class", "SparkPi", "spark-internal", "4")...)
	driver := prefix + "-driver"
	defer func() { _ = c.CoreV1().Pods("default").Delete(context.Background(), driver, metav1.DeleteOptions{}) }()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	pod, err := c.CoreV1().Pods("default").Get(ctx, driver, metav1.GetOptions{})
	if err != nil || pod.Spec.Containers[0].TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Fatalf("the driver pod: %v %+v", err, pod)
	}
	checkEvents(t, c, driver, EventDriverStarted, EventExecutorsRequested, EventExecutorRegistered, EventApplicationSucceeded)

	fprefix := fmt.Sprintf("ef%d", time.Now().UnixNano()%1e9)
	out, code = runSparkrpc(ctx, t, append(clusterArgs(t, fprefix), "--class", "ErrorApp", "spark-internal", "the-reason-of-the-failure")...)
	fdriver := fprefix + "-driver"
	defer func() { _ = c.CoreV1().Pods("default").Delete(context.Background(), fdriver, metav1.DeleteOptions{}) }()
	if code == 0 || !strings.Contains(out, "failed; the last lines of its log:") || strings.Count(out, "the-reason-of-the-failure") < 2 ||
		!strings.Contains(out, "its log ends:") {
		t.Fatalf("a failed driver: exit %d:\n%s", code, out)
	}
	checkEvents(t, c, fdriver, EventDriverStarted, EventApplicationFailed)
}

// checkEvents fails unless the Events on pod in namespace default have
// every reason of want.
func checkEvents(t *testing.T, c kubernetes.Interface, pod string, want ...string) {
	t.Helper()
	var got []string
	testutil.Eventually(t, 30*time.Second, "the Events on the driver pod "+pod, func() bool {
		l, err := c.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false
		}
		got = got[:0]
		for _, e := range l.Items {
			if e.Source.Component == eventSourceComponent {
				got = append(got, e.Reason)
			}
		}
		for _, w := range want {
			if !strings.Contains(strings.Join(got, " "), w) {
				return false
			}
		}
		return true
	})
}
