package kubeconf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseShape(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(tmpl, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {team: data}\nspec:\n  containers:\n  - name: side\n  - name: main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().
		Set(KeyExecutorPodTemplateFile, tmpl).Set(KeyExecutorPodTemplateContainerName, "main").
		Set(ExecutorKeys.VolumesPrefix+"emptyDir.scratch.mount.path", "/scratch").
		Set(ExecutorKeys.VolumesPrefix+"emptyDir.scratch.options.sizeLimit", "1Gi").
		Set(ExecutorKeys.VolumesPrefix+"hostPath.logs.mount.path", "/logs").
		Set(ExecutorKeys.VolumesPrefix+"hostPath.logs.mount.readOnly", "true").
		Set(ExecutorKeys.VolumesPrefix+"hostPath.logs.options.path", "/var/log").
		Set(ExecutorKeys.VolumesPrefix+"persistentVolumeClaim.data.mount.path", "/data").
		Set(ExecutorKeys.VolumesPrefix+"persistentVolumeClaim.data.mount.subPath", "x").
		Set(ExecutorKeys.VolumesPrefix+"persistentVolumeClaim.data.options.claimName", "claim").
		Set(ExecutorKeys.SecretsPrefix+"creds", "/etc/creds").
		Set(ExecutorKeys.SecretKeyRefPrefix+"PASSWORD", "db:password").
		Set(KeyExecutorEnvPrefix+"B", "2").Set(KeyExecutorEnvPrefix+"A", "1").
		Set(KeyDriverEnvPrefix+"D", "driver only").
		Set(KeyImagePullSecrets, "reg1, reg2").
		Set(KeyNodeSelectorPrefix+"disk", "ssd").Set(KeyNodeSelectorPrefix+"zone", "a").
		Set(ExecutorKeys.NodeSelectorPrefix+"zone", "b").
		Set(KeySchedulerName, "volcano").Set(DriverKeys.SchedulerName, "default-scheduler")
	e, err := ParseShape(conf, ExecutorKeys)
	if err != nil {
		t.Fatal(err)
	}
	if e.Template == nil || e.Template.Labels["team"] != "data" || e.TemplateContainer != "main" {
		t.Errorf("template %+v, container %q", e.Template, e.TemplateContainer)
	}
	size := resource.MustParse("1Gi")
	wantVols := []Volume{
		{Volume: corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}},
			Mount: corev1.VolumeMount{Name: "data", MountPath: "/data", SubPath: "x"}},
		{Volume: corev1.Volume{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}},
			Mount: corev1.VolumeMount{Name: "logs", MountPath: "/logs", ReadOnly: true}},
		{Volume: corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}},
			Mount: corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"}},
	}
	if len(e.Volumes) != 3 || e.Volumes[2].Volume.EmptyDir.SizeLimit.Cmp(size) != 0 {
		t.Fatalf("volumes %+v", e.Volumes)
	}
	e.Volumes[2].Volume.EmptyDir.SizeLimit = &size
	if !reflect.DeepEqual(e.Volumes, wantVols) {
		t.Errorf("volumes\n%+v, want\n%+v", e.Volumes, wantVols)
	}
	if !reflect.DeepEqual(e.Secrets, []SecretMount{{"creds", "/etc/creds"}}) {
		t.Errorf("secrets %v", e.Secrets)
	}
	if len(e.SecretEnv) != 1 || e.SecretEnv[0].Name != "PASSWORD" || e.SecretEnv[0].ValueFrom.SecretKeyRef.Name != "db" ||
		e.SecretEnv[0].ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("secret env %+v", e.SecretEnv)
	}
	if !reflect.DeepEqual(e.Env, []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}) {
		t.Errorf("env %v", e.Env)
	}
	if !reflect.DeepEqual(e.PullSecrets, []string{"reg1", "reg2"}) {
		t.Errorf("pull secrets %v", e.PullSecrets)
	}
	if !reflect.DeepEqual(e.NodeSelector, map[string]string{"disk": "ssd", "zone": "b"}) || e.SchedulerName != "volcano" {
		t.Errorf("node selector %v scheduler %q", e.NodeSelector, e.SchedulerName)
	}
	d, err := ParseShape(conf, DriverKeys)
	if err != nil {
		t.Fatal(err)
	}
	if d.Template != nil || len(d.Volumes) != 0 || !reflect.DeepEqual(d.Env, []corev1.EnvVar{{Name: "D", Value: "driver only"}}) ||
		!reflect.DeepEqual(d.NodeSelector, map[string]string{"disk": "ssd", "zone": "a"}) || d.SchedulerName != "default-scheduler" {
		t.Errorf("driver shape %+v", d)
	}
}

func TestParseShapeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	notPod := write("svc.yaml", "kind: Service\n")
	garbage := write("garbage.yaml", "spec: [1, 2\n")
	unknown := write("unknown.yaml", "spec:\n  containerz: []\n")
	pod := write("pod.json", `{"spec": {"containers": [{"name": "a"}]}}`)
	v := ExecutorKeys.VolumesPrefix
	for _, tc := range []struct {
		name    string
		kv      []string
		wantKey string
	}{
		{"missing template", []string{KeyExecutorPodTemplateFile, filepath.Join(dir, "none")}, KeyExecutorPodTemplateFile},
		{"not a pod", []string{KeyExecutorPodTemplateFile, notPod}, KeyExecutorPodTemplateFile},
		{"bad yaml", []string{KeyExecutorPodTemplateFile, garbage}, KeyExecutorPodTemplateFile},
		{"unknown field", []string{KeyExecutorPodTemplateFile, unknown}, KeyExecutorPodTemplateFile},
		{"no such container", []string{KeyExecutorPodTemplateFile, pod, KeyExecutorPodTemplateContainerName, "b"}, KeyExecutorPodTemplateFile},
		{"volume type", []string{v + "nfs.x.mount.path", "/x"}, v + "nfs.x.mount.path"},
		{"volume name", []string{v + "emptyDir.X_Y.mount.path", "/x"}, v + "emptyDir.X_Y.mount.path"},
		{"no mount path", []string{v + "emptyDir.x.options.medium", "Memory"}, v + "emptyDir.x.mount.path"},
		{"relative path", []string{v + "emptyDir.x.mount.path", "x"}, v + "emptyDir.x.mount.path"},
		{"bad readOnly", []string{v + "emptyDir.x.mount.path", "/x", v + "emptyDir.x.mount.readOnly", "maybe"}, v + "emptyDir.x.mount.readOnly"},
		{"bad size", []string{v + "emptyDir.x.mount.path", "/x", v + "emptyDir.x.options.sizeLimit", "big"}, v + "emptyDir.x.options.sizeLimit"},
		{"unknown option", []string{v + "emptyDir.x.mount.path", "/x", v + "emptyDir.x.options.path", "/y"}, v + "emptyDir.x.options.path"},
		{"unknown key", []string{v + "emptyDir.x.mount.path", "/x", v + "emptyDir.x.mount.mode", "1"}, v + "emptyDir.x.mount.mode"},
		{"two types", []string{v + "emptyDir.x.mount.path", "/x", v + "hostPath.x.options.path", "/y"}, ""},
		{"hostPath without path", []string{v + "hostPath.x.mount.path", "/x"}, v + "hostPath.x.options.path"},
		{"claim without name", []string{v + "persistentVolumeClaim.x.mount.path", "/x"}, v + "persistentVolumeClaim.x.options.claimName"},
		{"claim on demand", []string{v + "persistentVolumeClaim.x.mount.path", "/x", v + "persistentVolumeClaim.x.options.storageClass", "gp3"},
			v + "persistentVolumeClaim.x.options.storageClass"},
		{"secret path", []string{ExecutorKeys.SecretsPrefix + "s", "relative"}, ExecutorKeys.SecretsPrefix + "s"},
		{"secret name", []string{ExecutorKeys.SecretsPrefix + "S!", "/s"}, ExecutorKeys.SecretsPrefix + "S!"},
		{"secretKeyRef", []string{ExecutorKeys.SecretKeyRefPrefix + "E", "nokey"}, ExecutorKeys.SecretKeyRefPrefix + "E"},
		{"env name", []string{KeyExecutorEnvPrefix + "A=B", "x"}, KeyExecutorEnvPrefix + "A=B"},
		{"pull secret", []string{KeyImagePullSecrets, "ok,Not OK"}, KeyImagePullSecrets},
		{"node selector", []string{ExecutorKeys.NodeSelectorPrefix + "a", "not valid!"}, ExecutorKeys.NodeSelectorPrefix + "a"},
		{"scheduler", []string{KeySchedulerName, "Not_A_Name"}, KeySchedulerName},
		{"role scheduler", []string{ExecutorKeys.SchedulerName, "Not_A_Name"}, ExecutorKeys.SchedulerName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			for i := 0; i < len(tc.kv); i += 2 {
				conf.Set(tc.kv[i], tc.kv[i+1])
			}
			_, err := ParseShape(conf, ExecutorKeys)
			var ce *actor.ConfError
			if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("ParseShape = %v; want ErrInvalidConfig with a ConfError", err)
			}
			if tc.wantKey != "" && ce.Key != tc.wantKey {
				t.Fatalf("error names %s, want %s (%v)", ce.Key, tc.wantKey, err)
			}
		})
	}
}
