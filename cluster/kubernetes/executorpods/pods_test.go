package executorpods

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseConfigAndExecutorPod(t *testing.T) {
	conf := actor.NewConf().
		Set(cluster.KeyAppName, "Spark Pi!").
		Set(kubeconf.KeyContainerImage, "sparkrpc:1").
		Set(cluster.KeyExecutorCores, "2").
		Set(cluster.KeyExecutorMemory, "2g").
		Set(kubeconf.KeyNamespace, "jobs").
		Set(kubeconf.KeyExecutorLabelPrefix+"team", "data").
		Set(kubeconf.KeyExecutorAnnotationPrefix+"example.com/owner", "me").
		Set(kubeconf.KeyNodeSelectorPrefix+"disk", "ssd").
		Set(kubeconf.KeyServiceAccountName, "spark")
	c, err := kubeconf.Parse(conf, "spark-0123")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.PodNamePrefix, "spark-pi-") || len(c.PodNamePrefix) > kubeconf.MaxPrefixLen || !kubeconf.IsDNSLabel(c.PodNamePrefix) {
		t.Fatalf("prefix %q", c.PodNamePrefix)
	}
	pod := Pod(c, 7, "spark://CoarseGrainedScheduler@10.0.0.1:7078", "", nil)
	if pod.Name != c.PodNamePrefix+"-exec-7" || pod.Namespace != "jobs" {
		t.Fatalf("name %s/%s", pod.Namespace, pod.Name)
	}
	wantLabels := map[string]string{kubeconf.LabelAppSelector: "spark-0123", kubeconf.LabelAppName: "spark-pi", kubeconf.LabelRole: kubeconf.RoleExecutor, kubeconf.LabelExecutorID: "7", "team": "data"}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if pod.Annotations["example.com/owner"] != "me" || pod.Spec.NodeSelector["disk"] != "ssd" || pod.Spec.ServiceAccountName != "spark" {
		t.Errorf("annotations %v selector %v sa %q", pod.Annotations, pod.Spec.NodeSelector, pod.Spec.ServiceAccountName)
	}
	ctr := pod.Spec.Containers[0]
	// 2g + max(0.1 × 2048, 384) = 2048 + 384 MiB.
	if q := ctr.Resources.Requests[corev1.ResourceMemory]; q.Cmp(resource.MustParse("2432Mi")) != 0 {
		t.Errorf("memory request %s", q.String())
	}
	if q := ctr.Resources.Limits[corev1.ResourceMemory]; q.Cmp(resource.MustParse("2432Mi")) != 0 {
		t.Errorf("memory limit %s", q.String())
	}
	if q := ctr.Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("cpu request %s", q.String())
	}
	argv := append(slices.Clone(ctr.Command), ctr.Args...)
	want := []string{"sparkrpc", "executor", "--driver-url", "spark://CoarseGrainedScheduler@10.0.0.1:7078", "--executor-id", "7",
		"--hostname", "$(SPARK_EXECUTOR_POD_IP)", "--cores", "2", "--app-id", "spark-0123", "--resourceProfileId", "0"}
	if !slices.Equal(argv, want) {
		t.Errorf("command %q", argv)
	}
	found := false
	for _, e := range ctr.Env {
		if e.Name == kubeconf.EnvExecutorPodIP && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
			found = true
		}
	}
	if !found || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("env %v restart %v", ctr.Env, pod.Spec.RestartPolicy)
	}
}

// TestExecutorPodShape: the executor pod is built on the executors' pod
// template with the keys' shape, and mounts no service account token
// unless the executors have an account of their own.
func TestExecutorPodShape(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "executor.yaml")
	text := "metadata:\n  labels: {pool: spark}\nspec:\n  tolerations: [{key: dedicated, value: spark, effect: NoSchedule}]\n" +
		"  containers:\n  - name: proxy\n    image: envoy\n  - name: spark\n"
	if err := os.WriteFile(tmpl, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set(kubeconf.KeyContainerImage, "sparkrpc:1").Set(kubeconf.KeyServiceAccountName, "spark-driver").
		Set(kubeconf.KeyExecutorPodTemplateFile, tmpl).Set(kubeconf.KeyExecutorPodTemplateContainerName, "spark").
		Set(kubeconf.KeyExecutorEnvPrefix+"MODE", "batch")
	c, err := kubeconf.Parse(conf, "spark-0123")
	if err != nil {
		t.Fatal(err)
	}
	pod := Pod(c, 1, "spark://CoarseGrainedScheduler@10.0.0.1:7078", "", nil)
	cs := pod.Spec.Containers
	if len(cs) != 2 || cs[0].Name != kubeconf.ExecutorContainerName || cs[0].Image != "sparkrpc:1" || cs[1].Name != "proxy" {
		t.Fatalf("containers %+v", cs)
	}
	if pod.Labels["pool"] != "spark" || pod.Labels[kubeconf.LabelExecutorID] != "1" || len(pod.Spec.Tolerations) != 1 {
		t.Errorf("labels %v tolerations %v", pod.Labels, pod.Spec.Tolerations)
	}
	if !slices.Contains(cs[0].Env, corev1.EnvVar{Name: "MODE", Value: "batch"}) {
		t.Errorf("env %v", cs[0].Env)
	}
	if a := pod.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken %v without an executor account", a)
	}
	if sc := cs[0].SecurityContext; sc == nil || !*sc.ReadOnlyRootFilesystem || pod.Spec.SecurityContext == nil || !*pod.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("security context %+v, pod's %+v", sc, pod.Spec.SecurityContext)
	}
	c.ExecutorServiceAccount = "spark-executor"
	if pod := Pod(c, 2, "spark://x@h:1", "", nil); pod.Spec.ServiceAccountName != "spark-executor" || pod.Spec.AutomountServiceAccountToken != nil {
		t.Errorf("with an executor account: %q, automount %v", pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken)
	}
}

// TestExecutorPodAttributes: the executor container gets Spark's executor
// attributes (its pod's name, namespace and IP from the Downward API) and,
// when the driver serves its log, the log's URL.
func TestExecutorPodAttributes(t *testing.T) {
	c, err := kubeconf.Parse(actor.NewConf().Set(kubeconf.KeyContainerImage, "sparkrpc:1"), "spark-0123")
	if err != nil {
		t.Fatal(err)
	}
	env := func(pod *corev1.Pod) map[string]string {
		m := map[string]string{}
		for _, e := range pod.Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				m[e.Name] = "field:" + e.ValueFrom.FieldRef.FieldPath
			} else {
				m[e.Name] = e.Value
			}
		}
		return m
	}
	got := env(Pod(c, 4, "spark://x@h:1", "http://10.0.0.1:4040/executors/logs/?id=4&start=-4096", nil))
	want := map[string]string{
		"SPARK_EXECUTOR_ATTRIBUTE_APP_ID":               "spark-0123",
		"SPARK_EXECUTOR_ATTRIBUTE_EXECUTOR_ID":          "4",
		"SPARK_EXECUTOR_ATTRIBUTE_HOSTNAME":             "field:status.podIP",
		"SPARK_EXECUTOR_ATTRIBUTE_KUBERNETES_NAMESPACE": "field:metadata.namespace",
		"SPARK_EXECUTOR_ATTRIBUTE_KUBERNETES_POD_NAME":  "field:metadata.name",
		"SPARK_LOG_URL_LOG":                             "http://10.0.0.1:4040/executors/logs/?id=4&start=-4096",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := env(Pod(c, 4, "spark://x@h:1", "", nil))["SPARK_LOG_URL_LOG"]; ok {
		t.Errorf("SPARK_LOG_URL_LOG without a log URL")
	}
}
