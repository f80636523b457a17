package kubernetes

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/podspec"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
	corev1 "k8s.io/api/core/v1"
)

// noValueIn fails when any of values appears in obj's JSON.
func noValueIn(t *testing.T, what string, obj any, values ...string) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if strings.Contains(string(b), v) {
			t.Errorf("%s holds the sensitive value %q:\n%s", what, v, b)
		}
	}
}

// withoutLocalDir is spec without the local directory every pod mounts
// (podspec.LocalDir), for the tests of the other volumes.
func withoutLocalDir(spec corev1.PodSpec) corev1.PodSpec {
	spec = *spec.DeepCopy()
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == podspec.LocalDirName })
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == podspec.LocalDirName })
	}
	return spec
}

func checkAuthVolume(t *testing.T, spec corev1.PodSpec, secretName string) {
	t.Helper()
	spec = withoutLocalDir(spec)
	if len(spec.Volumes) != 1 || spec.Volumes[0].Secret == nil || spec.Volumes[0].Secret.SecretName != secretName ||
		*spec.Volumes[0].Secret.DefaultMode != 0o400 {
		t.Errorf("volumes %+v, want the Secret %s with mode 0400", spec.Volumes, secretName)
	}
	m := spec.Containers[0].VolumeMounts
	if len(m) != 1 || m[0].MountPath != kubeconf.AuthSecretMountPath || !m[0].ReadOnly {
		t.Errorf("mounts %+v", m)
	}
}

// testConfig is the configuration of an application without
// authentication, as kubeconf.Parse would give it.
func testConfig() *kubeconf.Config {
	return &kubeconf.Config{AppID: "spark-1", AppName: "SparkPi", Namespace: "default", PodNamePrefix: "sparkpi-abc", BatchSize: 10,
		BatchDelay: time.Second, ExecutorTimeout: time.Minute, MaxPendingPods: 1 << 30, DeleteOnTermination: true,
		MaxExecutorFailures: 3, ExecutorImage: "img", ExecutorCores: 1, ExecutorMemoryMiB: 1024, ExecutorOverheadMiB: 384,
		ExecutorRequestCores: "1", Executable: "sparkrpc", PullPolicy: "IfNotPresent"}
}

func driverPodNoSecret(m cluster.Master, conf *actor.Conf, kcfg *kubeconf.Config) (*corev1.Pod, []string, error) {
	pod, _, dropped, err := driverPod(cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf}, kcfg, "app-driver", nil)
	return pod, dropped, err
}

// TestDriverPodKeepsSecretsOut: the cluster-mode driver pod's arguments
// carry no sensitive key (Spark's redaction regex, and the user's), only
// the files of the mounted Secret (the shared secret, the driver's token).
func TestDriverPodKeepsSecretsOut(t *testing.T) {
	conf := actor.NewConf().
		Set(kubeconf.KeyContainerImage, "img").
		Set(netty.KeyAuthenticate, "true").
		Set(netty.KeyAuthenticateSecret, "s3cr3t-value").
		Set(netty.KeyAuthenticateSecretFile, "/home/me/secret").
		Set(kubeconf.KeyAuthDriverPrefix+kubeconf.AuthOAuthToken, "t0ken-value").
		Set("spark.db.password", "passw0rd-value").
		Set("spark.custom.credential", "cust0m-value").
		Set(webui.KeyRedactionRegex, "(?i)credential").
		Set(cluster.KeyAppName, "app")
	kcfg, err := kubeconf.Parse(conf, "spark-1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cluster.ParseMaster("k8s://https://127.0.0.1:6443")
	secret := authSecret(kcfg, "app-auth-secret", map[string][]byte{kubeconf.AuthSecretKey: []byte("s3cr3t-value"), kubeconf.DriverOAuthTokenKey: []byte("t0ken-value")})
	pod, _, dropped, err := driverPod(cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf}, kcfg, "app-driver", secret)
	if err != nil {
		t.Fatal(err)
	}
	noValueIn(t, "the driver pod", pod, "s3cr3t-value", "t0ken-value", "passw0rd-value", "cust0m-value")
	want := []string{"spark.custom.credential", "spark.db.password"}
	if !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
	args := pod.Spec.Containers[0].Args
	for _, a := range []string{netty.KeyAuthenticate + "=true", netty.KeyAuthenticateSecretFile + "=" + kubeconf.AuthSecretFile,
		kubeconf.KeyAuthSecretName + "=app-auth-secret", webui.KeyRedactionRegex + "=(?i)credential",
		kubeconf.KeyAuthDriverPrefix + kubeconf.AuthOAuthTokenFile + "=" + kubeconf.AuthSecretMountPath + "/" + kubeconf.DriverOAuthTokenKey} {
		if !slices.Contains(args, a) {
			t.Errorf("args lack %q: %q", a, args)
		}
	}
	checkAuthVolume(t, pod.Spec, "app-auth-secret")
	if items := pod.Spec.Volumes[0].Secret.Items; len(items) != 2 {
		t.Errorf("the driver pod mounts %+v, want the secret and its token", items)
	}

	// Without authentication, no volume, and the secret is still left out.
	conf.Set(netty.KeyAuthenticate, "false")
	pod, dropped, err = driverPodNoSecret(m, conf, kcfg)
	if err != nil {
		t.Fatal(err)
	}
	noValueIn(t, "the driver pod", pod, "s3cr3t-value", "t0ken-value")
	if want := []string{"spark.authenticate.secret", "spark.custom.credential", "spark.db.password", kubeconf.KeyAuthDriverPrefix + kubeconf.AuthOAuthToken}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
	if v := withoutLocalDir(pod.Spec).Volumes; len(v) != 0 {
		t.Errorf("volumes %+v", v)
	}
}

// TestExecutorPodMountsAuthSecret: executor pods start with the startup
// keys and the mounted secret file, never the secret.
func TestExecutorPodMountsAuthSecret(t *testing.T) {
	conf := actor.NewConf().
		Set(netty.KeyAuthenticate, "true").
		Set(netty.KeyAuthenticateSecret, "s3cr3t-value").
		Set(netty.KeyAuthenticateSecretFile, "/home/me/secret").
		Set("spark.rpc.io.connectionTimeout", "30s").
		Set("spark.ssl.keyPassword", "passw0rd-value").
		Set("spark.executor.memory", "1g")
	red, err := newRedactor(conf)
	if err != nil {
		t.Fatal(err)
	}
	c := testConfig()
	c.AuthSecretName = "sparkpi-abc-auth-secret"
	c.ExecutorConf = executorStartupConf(conf, red, c.AuthSecretName)
	pod := executorpods.Pod(c, 1, "spark://CoarseGrainedScheduler@127.0.0.1:7078", "", nil)
	noValueIn(t, "the executor pod", pod, "s3cr3t-value", "passw0rd-value", "/home/me/secret")
	args := strings.Join(pod.Spec.Containers[0].Args, " ")
	for _, a := range []string{"--conf " + netty.KeyAuthenticate + "=true", "--conf " + netty.KeyAuthenticateSecretFile + "=" + kubeconf.AuthSecretFile,
		"--conf spark.rpc.io.connectionTimeout=30s"} {
		if !strings.Contains(args, a) {
			t.Errorf("args lack %q: %s", a, args)
		}
	}
	if strings.Contains(args, "spark.executor.memory") {
		t.Errorf("args carry a key that is not a startup key: %s", args)
	}
	checkAuthVolume(t, pod.Spec, c.AuthSecretName)
}

func TestAppAuthSecret(t *testing.T) {
	on := func() *actor.Conf { return actor.NewConf().Set(netty.KeyAuthenticate, "true") }
	s, gen, err := appAuthSecret(on())
	if err != nil || !gen || !regexp.MustCompile(`^[0-9a-f]{64}$`).Match(s) {
		t.Fatalf("generated %q, %v, %v; want 64 hex digits", s, gen, err)
	}
	s2, _, _ := appAuthSecret(on())
	if string(s2) == string(s) {
		t.Fatal("two applications got the same secret")
	}
	if s, gen, err := appAuthSecret(on().Set(netty.KeyAuthenticateSecret, "given")); err != nil || gen || string(s) != "given" {
		t.Fatalf("given secret: %q, %v, %v", s, gen, err)
	}
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte("from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := appAuthSecret(on().Set(netty.KeyAuthenticateSecretFile, f)); err == nil {
		t.Fatal("a world-readable secret file was accepted")
	}
	if err := os.Chmod(f, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, gen, err := appAuthSecret(on().Set(netty.KeyAuthenticateSecretFile, f)); err != nil || gen || string(s) != "from-file" {
		t.Fatalf("secret file: %q, %v, %v", s, gen, err)
	}
	if _, err := newRedactor(actor.NewConf().Set(webui.KeyRedactionRegex, "(")); !errors.Is(err, kubeconf.ErrInvalidConfig) ||
		!strings.Contains(err.Error(), webui.KeyRedactionRegex) {
		t.Fatalf("bad regex: %v", err)
	}
}
