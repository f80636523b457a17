package podspec

import (
	"reflect"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

// pod is a pod whose first container is c.
func pod(c corev1.Container, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func TestBuildBase(t *testing.T) {
	for _, tc := range []struct {
		name      string
		template  *corev1.Pod
		container string
		want      []string // the containers' names, Spark's first
	}{
		{"no template", nil, "", []string{""}},
		{"no containers", &corev1.Pod{}, "", []string{""}},
		{"first by default", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}, "", []string{"a", "b"}},
		{"named", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}}}}, "c", []string{"c", "a", "b"}},
		{"named first", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}, "a", []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before *corev1.Pod
			if tc.template != nil {
				before = tc.template.DeepCopy()
			}
			got := Build(tc.template, tc.container)
			var names []string
			for _, c := range got.Spec.Containers {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, tc.want) {
				t.Errorf("containers %v, want %v", names, tc.want)
			}
			if tc.template != nil && !reflect.DeepEqual(before, tc.template) {
				t.Errorf("Build changed the template")
			}
		})
	}
	live := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u", ResourceVersion: "9", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	got := Build(live, "")
	if got.Name != "" || got.UID != "" || got.ResourceVersion != "" || got.Spec.NodeName != "" || got.Status.Phase != "" || got.Labels["a"] != "b" {
		t.Errorf("base of a live pod: %+v", got)
	}
}

func TestOverlay(t *testing.T) {
	ctrl := true
	own := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"spark-role": "executor", "team": "spark"},
			Annotations: map[string]string{"a": "own"}, OwnerReferences: []metav1.OwnerReference{{Name: "driver", Controller: &ctrl}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Hostname: "p", ServiceAccountName: "spark",
			NodeSelector: map[string]string{"disk": "ssd"},
			Volumes:      []corev1.Volume{{Name: "auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}},
			Containers: []corev1.Container{{Name: "spark", Image: "img", ImagePullPolicy: corev1.PullAlways, Command: []string{"sparkrpc"}, Args: []string{"executor"},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Ports:                    []corev1.ContainerPort{{Name: "rpc", ContainerPort: 7078}},
				Env:                      []corev1.EnvVar{{Name: "SPARK", Value: "own"}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("1")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "auth", MountPath: "/auth"}}}}},
	}
	for _, tc := range []struct {
		name     string
		template *corev1.Pod
		check    func(t *testing.T, p *corev1.Pod)
	}{
		{"no template", nil, func(t *testing.T, p *corev1.Pod) {
			want := own.DeepCopy()
			if !reflect.DeepEqual(p, want) {
				t.Errorf("got\n%+v\nwant\n%+v", p, want)
			}
		}},
		{"template", &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "tmpl", Namespace: "other", Labels: map[string]string{"team": "data", "tier": "batch"},
				Annotations: map[string]string{"a": "tmpl", "b": "tmpl"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, ServiceAccountName: "tmpl-sa",
				NodeSelector: map[string]string{"disk": "hdd", "pool": "spark"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Value: "spark", Effect: corev1.TaintEffectNoSchedule}},
				Affinity:     &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
				Volumes:      []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				Containers: []corev1.Container{{Name: "main", Image: "tmpl", Args: []string{"x"},
					Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}},
					Env:   []corev1.EnvVar{{Name: "SPARK", Value: "tmpl"}, {Name: "KEEP", Value: "tmpl"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi"), "example.com/gpu": resource.MustParse("1")},
						Limits:   corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}},
					VolumeMounts:    []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}},
					SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1000))}},
					{Name: "sidecar", Image: "proxy"}}},
		}, func(t *testing.T, p *corev1.Pod) {
			if p.Name != "p" || p.Namespace != "ns" || len(p.OwnerReferences) != 1 || p.Spec.RestartPolicy != corev1.RestartPolicyNever ||
				p.Spec.ServiceAccountName != "spark" || p.Spec.Hostname != "p" {
				t.Errorf("sparkrpc's fields: %+v", p.ObjectMeta)
			}
			if !reflect.DeepEqual(p.Labels, map[string]string{"spark-role": "executor", "team": "spark", "tier": "batch"}) ||
				!reflect.DeepEqual(p.Annotations, map[string]string{"a": "own", "b": "tmpl"}) {
				t.Errorf("labels %v annotations %v", p.Labels, p.Annotations)
			}
			if !reflect.DeepEqual(p.Spec.NodeSelector, map[string]string{"disk": "ssd", "pool": "spark"}) || len(p.Spec.Tolerations) != 1 ||
				p.Spec.Affinity == nil || len(p.Spec.Volumes) != 2 {
				t.Errorf("selector %v tolerations %v affinity %v volumes %v", p.Spec.NodeSelector, p.Spec.Tolerations, p.Spec.Affinity, p.Spec.Volumes)
			}
			if len(p.Spec.Containers) != 2 || p.Spec.Containers[1].Name != "sidecar" || p.Spec.Containers[1].Image != "proxy" {
				t.Errorf("sidecar %+v", p.Spec.Containers)
			}
			c := p.Spec.Containers[0]
			if c.Name != "spark" || c.Image != "img" || c.ImagePullPolicy != corev1.PullAlways || !reflect.DeepEqual(c.Args, []string{"executor"}) ||
				c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError ||
				c.SecurityContext == nil || *c.SecurityContext.RunAsUser != 1000 || len(c.Ports) != 2 || len(c.VolumeMounts) != 2 {
				t.Errorf("container %+v", c)
			}
			if !reflect.DeepEqual(c.Env, []corev1.EnvVar{{Name: "SPARK", Value: "own"}, {Name: "KEEP", Value: "tmpl"}}) {
				t.Errorf("env %v", c.Env)
			}
			mem, gpu := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Requests["example.com/gpu"]
			if mem.Cmp(resource.MustParse("1Gi")) != 0 || gpu.Cmp(resource.MustParse("1")) != 0 || len(c.Resources.Limits) != 2 {
				t.Errorf("resources %v", c.Resources)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := own.DeepCopy()
			tc.check(t, Build(tc.template, "", Overlay(own)))
			if !reflect.DeepEqual(before, own) {
				t.Errorf("Overlay changed its pod")
			}
		})
	}
}

func TestSteps(t *testing.T) {
	size := resource.MustParse("1Gi")
	spark := corev1.Container{Name: "spark"}
	for _, tc := range []struct {
		name string
		in   *corev1.Pod
		step Step
		want *corev1.Pod
	}{
		{"volumes", pod(spark), Volumes([]kubeconf.Volume{{
			Volume: corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}},
			Mount:  corev1.VolumeMount{Name: "v", MountPath: "/v", ReadOnly: true}}}),
			pod(corev1.Container{Name: "spark", VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v", ReadOnly: true}}}, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}}}
			})},
		{"secrets", pod(spark), Secrets([]kubeconf.SecretMount{{Name: "creds", Path: "/etc/creds"}}),
			pod(corev1.Container{Name: "spark", VolumeMounts: []corev1.VolumeMount{{Name: "creds-volume", MountPath: "/etc/creds", ReadOnly: true}}}, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "creds-volume", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}}
			})},
		{"env", pod(corev1.Container{Name: "spark", Env: []corev1.EnvVar{{Name: "A", Value: "old"}, {Name: "B", Value: "b"}}}),
			Env([]corev1.EnvVar{{Name: "A", Value: "new"}, {Name: "C", Value: "c"}}),
			pod(corev1.Container{Name: "spark", Env: []corev1.EnvVar{{Name: "A", Value: "new"}, {Name: "B", Value: "b"}, {Name: "C", Value: "c"}}})},
		{"local dir", pod(spark), LocalDir(),
			pod(corev1.Container{Name: "spark", WorkingDir: LocalDirPath, Env: []corev1.EnvVar{{Name: EnvLocalDirs, Value: LocalDirPath}},
				VolumeMounts: []corev1.VolumeMount{{Name: LocalDirName, MountPath: LocalDirPath}}}, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: LocalDirName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			})},
		{"local dir of the template", pod(corev1.Container{Name: "spark", VolumeMounts: []corev1.VolumeMount{{Name: "fast", MountPath: LocalDirPath}}}), LocalDir(),
			pod(corev1.Container{Name: "spark", VolumeMounts: []corev1.VolumeMount{{Name: "fast", MountPath: LocalDirPath}}})},
		{"node selector", pod(spark, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"a": "t", "b": "t"} }),
			NodeSelector(map[string]string{"b": "k", "c": "k"}),
			pod(spark, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"a": "t", "b": "k", "c": "k"} })},
		{"no node selector", pod(spark), NodeSelector(nil), pod(spark)},
		{"scheduler", pod(spark), SchedulerName("volcano"), pod(spark, func(p *corev1.Pod) { p.Spec.SchedulerName = "volcano" })},
		{"template's scheduler", pod(spark, func(p *corev1.Pod) { p.Spec.SchedulerName = "yunikorn" }), SchedulerName(""),
			pod(spark, func(p *corev1.Pod) { p.Spec.SchedulerName = "yunikorn" })},
		{"pull secrets", pod(spark, func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "a"}} }),
			PullSecrets([]string{"a", "b"}),
			pod(spark, func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "a"}, {Name: "b"}} })},
		{"no token", pod(spark), NoTokenUnless(false), pod(spark, func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(false) })},
		{"own account's token", pod(spark), NoTokenUnless(true), pod(spark)},
		{"template's token", pod(spark, func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(true) }), NoTokenUnless(false),
			pod(spark, func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(true) })},
		{"restricted", pod(spark), Restricted(), pod(corev1.Container{Name: "spark", SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot: ptr(true), AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}, func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(NonRootUID)),
				RunAsGroup: ptr(int64(NonRootUID)), FSGroup: ptr(int64(NonRootUID)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		})},
		{"template's security context", pod(corev1.Container{Name: "spark", SecurityContext: &corev1.SecurityContext{}}, func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		}), Restricted(), pod(corev1.Container{Name: "spark", SecurityContext: &corev1.SecurityContext{}}, func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		})},
		{"executor template", pod(spark), CarryExecutorTemplate([]byte("kind: Pod\n")), pod(corev1.Container{Name: "spark",
			VolumeMounts: []corev1.VolumeMount{{Name: executorTemplateVolume, MountPath: ExecutorTemplateDir, ReadOnly: true}}}, func(p *corev1.Pod) {
			p.Annotations = map[string]string{ExecutorTemplateAnnotation: "kind: Pod\n"}
			p.Spec.Volumes = []corev1.Volume{{Name: executorTemplateVolume, VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
				Items: []corev1.DownwardAPIVolumeFile{{Path: "pod-spec-template.yml",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['sparkrpc.io/executor-pod-template']"}}}}}}}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.step(tc.in)
			if !reflect.DeepEqual(tc.in, tc.want) {
				t.Errorf("got\n%+v\nwant\n%+v", tc.in, tc.want)
			}
		})
	}
}

// TestPodOrder: the steps of a shape run in their order on the template,
// and Restricted leaves a sidecar alone.
func TestPodOrder(t *testing.T) {
	tmpl := pod(corev1.Container{Name: "side", Image: "proxy"}, func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "main"})
	})
	own := pod(corev1.Container{Name: "spark", Env: []corev1.EnvVar{{Name: "X", Value: "own"}}})
	got := Pod(kubeconf.PodShape{Template: tmpl, TemplateContainer: "main", Env: []corev1.EnvVar{{Name: "X", Value: "user"}},
		SchedulerName: "volcano"}, own, NoTokenUnless(false))
	c := got.Spec.Containers
	if len(c) != 2 || c[0].Name != "spark" || c[1].Name != "side" || c[1].SecurityContext != nil || c[0].SecurityContext == nil {
		t.Fatalf("containers %+v", c)
	}
	if c[0].Env[0] != (corev1.EnvVar{Name: "X", Value: "user"}) || got.Spec.SchedulerName != "volcano" ||
		*got.Spec.AutomountServiceAccountToken || c[0].WorkingDir != LocalDirPath {
		t.Errorf("pod %+v", got)
	}
}
