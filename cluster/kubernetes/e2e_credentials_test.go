package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// applyRBAC creates the objects of the repository's RBAC manifest in
// namespace, as `kubectl apply -n NAMESPACE -f` does, and deletes them at
// the end of the test.
func applyRBAC(t *testing.T, c kubernetes.Interface, namespace string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw.Raw, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			o.Namespace = namespace
			if _, err := c.CoreV1().ServiceAccounts(namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("service account %s: %v", o.Name, err)
			}
			t.Cleanup(func() {
				_ = c.CoreV1().ServiceAccounts(namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.Role:
			o.Namespace = namespace
			if _, err := c.RbacV1().Roles(namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("role %s: %v", o.Name, err)
			}
			t.Cleanup(func() { _ = c.RbacV1().Roles(namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.RoleBinding:
			o.Namespace = namespace
			if _, err := c.RbacV1().RoleBindings(namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("role binding %s: %v", o.Name, err)
			}
			t.Cleanup(func() {
				_ = c.RbacV1().RoleBindings(namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		default:
			t.Fatalf("unexpected object %T in the RBAC manifest", obj)
		}
	}
}

// TestKubernetesClusterModeServiceAccount: a cluster-mode driver pod gets
// its credentials as on a real cluster, from its service account (the
// repository's RBAC manifest), with no credential in the configuration.
func TestKubernetesClusterModeServiceAccount(t *testing.T) {
	c := needCluster(t)
	applyRBAC(t, c, "default")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("sa%d", time.Now().UnixNano()%1e9)
	out, code := runSparkrpc(ctx, t, "submit", "--master", "k8s://"+controlPlane.Server(), "--deploy-mode", "cluster",
		"--num-executors", "2", "--executor-memory", "512m",
		"--conf", kubeconf.KeyContainerImage+"=sparkrpc:test",
		"--conf", kubeconf.KeyExecutorPodNamePrefix+"="+prefix,
		"--conf", kubeconf.KeyBatchDelay+"=100ms",
		"--conf", kubeconf.KeyServiceAccountName+"=sparkrpc-driver",
		"--class", "SparkPi", "spark-internal", "4")
	driver := prefix + "-driver"
	defer func() { _ = c.CoreV1().Pods("default").Delete(context.Background(), driver, metav1.DeleteOptions{}) }()
	logs, err := c.CoreV1().Pods("default").GetLogs(driver, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("driver log: %v (submit: exit %d)\n%s", err, code, out)
	}
	if code != 0 {
		t.Fatalf("submit: exit %d:\n%s\ndriver log:\n%s", code, out, logs)
	}
	checkPi(t, string(logs), 4)
	if !strings.Contains(string(logs), `user \"service-account\"`) && !strings.Contains(string(logs), `user "service-account"`) {
		t.Errorf("the driver did not use its pod's service account token:\n%s", logs)
	}
}
