package kubernetes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/podspec"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// executorTemplate is a platform team's executor pod template: a label, a
// toleration, a volume of its own mounted in Spark's container, a
// sidecar listed before Spark's container, and no security context.
const executorTemplate = `apiVersion: v1
kind: Pod
metadata:
  labels:
    platform: team-a
spec:
  tolerations:
  - key: dedicated
    operator: Equal
    value: spark
    effect: NoSchedule
  volumes:
  - name: shared
    emptyDir: {}
  containers:
  - name: log-shipper
    image: busybox:1.36
    command: ["sleep", "infinity"]
    volumeMounts:
    - name: shared
      mountPath: /shared
  - name: spark
    volumeMounts:
    - name: shared
      mountPath: /shared
`

// writeTemplate writes text to a file of the test's and returns its path.
func writeTemplate(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "executor-template.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// shapeKeys are the keys, besides the template, that the e2e tests give
// the executor pods: a volume and a variable.
var shapeKeys = [][2]string{
	{kubeconf.ExecutorKeys.VolumesPrefix + "emptyDir.scratch.mount.path", "/scratch"},
	{kubeconf.ExecutorKeys.VolumesPrefix + "emptyDir.scratch.options.sizeLimit", "64Mi"},
	{kubeconf.KeyExecutorEnvPrefix + "PODSHAPE_TEST", "from-key"},
	{kubeconf.KeyExecutorPodTemplateContainerName, "spark"},
	{kubeconf.KeyDeleteOnTermination, "false"}, // keep the pods, to read them back
}

// checkShapedExecutors checks that the application's executor pods, read
// back from the API server, have the template's and the keys' shape and
// least privilege, then deletes them.
func checkShapedExecutors(t *testing.T, c kubernetes.Interface, appID string, want int) {
	t.Helper()
	pods := executorPods(t, c, appID)
	t.Cleanup(func() {
		for _, p := range pods {
			_ = c.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{})
		}
	})
	if len(pods) != want {
		t.Fatalf("%d executor pods kept, want %d", len(pods), want)
	}
	for _, p := range pods {
		s := p.Spec
		if p.Labels["platform"] != "team-a" || p.Labels[kubeconf.LabelRole] != kubeconf.RoleExecutor {
			t.Errorf("pod %s: labels %v", p.Name, p.Labels)
		}
		if !slices.ContainsFunc(s.Tolerations, func(tl corev1.Toleration) bool { return tl.Key == "dedicated" && tl.Value == "spark" }) {
			t.Errorf("pod %s: tolerations %v", p.Name, s.Tolerations)
		}
		if len(s.Containers) != 2 || s.Containers[0].Name != kubeconf.ExecutorContainerName || s.Containers[1].Name != "log-shipper" ||
			s.Containers[1].Image != "busybox:1.36" {
			t.Fatalf("pod %s: containers %+v", p.Name, s.Containers)
		}
		vols := map[string]corev1.Volume{}
		for _, v := range s.Volumes {
			vols[v.Name] = v
		}
		if vols["shared"].EmptyDir == nil || vols["scratch"].EmptyDir == nil || vols["scratch"].EmptyDir.SizeLimit.String() != "64Mi" {
			t.Errorf("pod %s: volumes %+v", p.Name, s.Volumes)
		}
		spark := s.Containers[0]
		mounts := map[string]string{}
		for _, m := range spark.VolumeMounts {
			mounts[m.MountPath] = m.Name
		}
		if mounts["/shared"] != "shared" || mounts["/scratch"] != "scratch" || mounts[podspec.LocalDirPath] != podspec.LocalDirName {
			t.Errorf("pod %s: mounts %v", p.Name, spark.VolumeMounts)
		}
		if !slices.Contains(spark.Env, corev1.EnvVar{Name: "PODSHAPE_TEST", Value: "from-key"}) {
			t.Errorf("pod %s: env %v", p.Name, spark.Env)
		}
		if a := s.AutomountServiceAccountToken; a == nil || *a {
			t.Errorf("pod %s: automountServiceAccountToken %v, want false", p.Name, a)
		}
		sc, psc := spark.SecurityContext, s.SecurityContext
		if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
			psc == nil || !*psc.RunAsNonRoot || *psc.RunAsUser != podspec.NonRootUID || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("pod %s: security context %+v, pod's %+v", p.Name, sc, psc)
		}
		if s.Containers[1].SecurityContext != nil {
			t.Errorf("pod %s: the sidecar got a security context", p.Name)
		}
	}
}

// TestKubernetesPodTemplateClientMode: the executors' pod template (a
// label, a toleration, an emptyDir volume, a sidecar), a volume key and an
// environment key reach the executor pods, read back from the API server;
// the executors run without a service account token; SparkPi gives its
// exact result.
func TestKubernetesPodTemplateClientMode(t *testing.T) {
	c := needCluster(t)
	conf := e2eConf(t, 2).Set(kubeconf.KeyExecutorPodTemplateFile, writeTemplate(t, executorTemplate))
	for _, kv := range shapeKeys {
		conf.Set(kv[0], kv[1])
	}
	appID := kubeconf.NewAppID()
	conf.Set(cluster.KeyAppID, appID)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, err := submit(ctx, t, conf, "SparkPi", "4")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	checkPi(t, stdout.String(), 4)
	checkShapedExecutors(t, c, appID, 2)
}

// TestKubernetesPodTemplateClusterMode: in cluster mode the executors'
// template, a file of the submitting machine, reaches the driver pod (an
// annotation mounted as a file) and from it the executor pods; the driver
// pod gets its own template's label and the restricted security context.
func TestKubernetesPodTemplateClusterMode(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("pt%d", time.Now().UnixNano()%1e9)
	driverTemplate := filepath.Join(t.TempDir(), "driver.yaml")
	if err := os.WriteFile(driverTemplate, []byte("metadata:\n  labels: {platform: team-d}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := clusterArgs(t, prefix)
	args = append(args, "--conf", kubeconf.KeyExecutorPodTemplateFile+"="+writeTemplate(t, executorTemplate),
		"--conf", kubeconf.KeyDriverPodTemplateFile+"="+driverTemplate,
		"--conf", kubeconf.KeyDriverEnvPrefix+"PODSHAPE_DRIVER=yes")
	for _, kv := range shapeKeys {
		args = append(args, "--conf", kv[0]+"="+kv[1])
	}
	out, code := runSparkrpc(ctx, t, append(args, "--class", "SparkPi", "spark-internal", "4")...)
	driver := prefix + "-driver"
	defer func() { _ = c.CoreV1().Pods("default").Delete(context.Background(), driver, metav1.DeleteOptions{}) }()
	if code != 0 {
		t.Fatalf("submit: exit %d:\n%s", code, out)
	}
	logs, err := c.CoreV1().Pods("default").GetLogs(driver, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkPi(t, string(logs), 4)
	dp, err := c.CoreV1().Pods("default").Get(ctx, driver, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dp.Labels["platform"] != "team-d" || dp.Spec.SecurityContext == nil || dp.Spec.Containers[0].SecurityContext == nil ||
		!slices.Contains(dp.Spec.Containers[0].Env, corev1.EnvVar{Name: "PODSHAPE_DRIVER", Value: "yes"}) {
		t.Errorf("driver pod: labels %v, security context %v, env %v", dp.Labels, dp.Spec.SecurityContext, dp.Spec.Containers[0].Env)
	}
	if dp.Spec.AutomountServiceAccountToken != nil {
		t.Errorf("driver pod: automountServiceAccountToken %v; the driver needs its token", *dp.Spec.AutomountServiceAccountToken)
	}
	checkShapedExecutors(t, c, dp.Labels[kubeconf.LabelAppSelector], 2)
}

// TestDriverPodShape: the driver pod is built on its template with the
// driver's keys, and carries the executors' template to a file that its
// configuration names; the driver's template file is not passed on.
func TestDriverPodShape(t *testing.T) {
	dir := t.TempDir()
	dt, et := filepath.Join(dir, "driver.yaml"), filepath.Join(dir, "executor.yaml")
	if err := os.WriteFile(dt, []byte("metadata:\n  annotations: {team: d}\nspec:\n  containers: [{name: c, workingDir: /w}, {name: s, image: side}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(et, []byte(executorTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set(kubeconf.KeyContainerImage, "img").
		Set(kubeconf.KeyDriverPodTemplateFile, dt).Set(kubeconf.KeyDriverPodTemplateContainerName, "c").
		Set(kubeconf.KeyExecutorPodTemplateFile, et).Set(kubeconf.KeyExecutorPodTemplateContainerName, "spark").
		Set(kubeconf.DriverKeys.SecretsPrefix+"creds", "/creds").
		Set(kubeconf.DriverKeys.NodeSelectorPrefix+"pool", "drivers").
		Set(kubeconf.KeyImagePullSecrets, "registry")
	kcfg, err := kubeconf.Parse(conf, "spark-1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cluster.ParseMaster("k8s://https://127.0.0.1:6443")
	pod, _, _, err := driverPod(cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf}, kcfg, "app-driver", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := pod.Spec.Containers
	if len(cs) != 2 || cs[0].Name != kubeconf.DriverContainerName || cs[0].WorkingDir != "/w" || cs[1].Image != "side" {
		t.Fatalf("containers %+v", cs)
	}
	if pod.Annotations["team"] != "d" || pod.Spec.NodeSelector["pool"] != "drivers" || len(pod.Spec.ImagePullSecrets) != 1 {
		t.Errorf("annotations %v, selector %v, pull secrets %v", pod.Annotations, pod.Spec.NodeSelector, pod.Spec.ImagePullSecrets)
	}
	carried, err := podReadTemplate(pod.Annotations[podspec.ExecutorTemplateAnnotation], dir)
	if err != nil || carried.Labels["platform"] != "team-a" || len(carried.Spec.Containers) != 2 {
		t.Errorf("the carried executor template: %v %+v", err, carried)
	}
	args := cs[0].Args
	if !slices.Contains(args, kubeconf.KeyExecutorPodTemplateFile+"="+podspec.ExecutorTemplateFile) ||
		slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, kubeconf.KeyDriverPodTemplateFile+"=") }) {
		t.Errorf("args %q", args)
	}
	if !slices.ContainsFunc(cs[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/creds" }) ||
		!slices.ContainsFunc(cs[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == podspec.ExecutorTemplateDir }) {
		t.Errorf("mounts %v", cs[0].VolumeMounts)
	}
	// The executors' own pods, built from the carried template by a
	// driver in the pod, have the template's sidecar.
	ep := executorpods.Pod(kcfg, 1, "spark://x@h:1", "", nil)
	if len(ep.Spec.Containers) != 2 || ep.Spec.Containers[1].Name != "log-shipper" {
		t.Errorf("executor pod containers %+v", ep.Spec.Containers)
	}
}

// podReadTemplate reads a template's text as kubeconf.ReadPodTemplate
// reads its file.
func podReadTemplate(text, dir string) (*corev1.Pod, error) {
	f := filepath.Join(dir, "carried.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		return nil, err
	}
	return kubeconf.ReadPodTemplate(f, "")
}
