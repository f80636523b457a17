package kubernetes

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseConfigAndExecutorPod(t *testing.T) {
	conf := actor.NewConf().
		Set(cluster.KeyAppName, "Spark Pi!").
		Set(KeyContainerImage, "sparkrpc:1").
		Set(cluster.KeyExecutorCores, "2").
		Set(cluster.KeyExecutorMemory, "2g").
		Set(KeyNamespace, "jobs").
		Set(KeyExecutorLabelPrefix+"team", "data").
		Set(KeyExecutorAnnotationPrefix+"example.com/owner", "me").
		Set(KeyNodeSelectorPrefix+"disk", "ssd").
		Set(KeyServiceAccountName, "spark")
	c, err := parseConfig(conf, "spark-0123")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.PodNamePrefix, "spark-pi-") || len(c.PodNamePrefix) > maxPrefixLen || !dnsLabelRe.MatchString(c.PodNamePrefix) {
		t.Fatalf("prefix %q", c.PodNamePrefix)
	}
	pod := c.executorPod(7, "spark://CoarseGrainedScheduler@10.0.0.1:7078", nil)
	if pod.Name != c.PodNamePrefix+"-exec-7" || pod.Namespace != "jobs" {
		t.Fatalf("name %s/%s", pod.Namespace, pod.Name)
	}
	wantLabels := map[string]string{LabelAppSelector: "spark-0123", LabelAppName: "spark-pi", LabelRole: RoleExecutor, LabelExecutorID: "7", "team": "data"}
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
		if e.Name == EnvExecutorPodIP && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
			found = true
		}
	}
	if !found || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("env %v restart %v", ctr.Env, pod.Spec.RestartPolicy)
	}
}

func TestOverhead(t *testing.T) {
	for _, tc := range []struct {
		mem, factor, over string
		want              int64
	}{
		{"1g", "", "", 384}, {"10g", "", "", 1024}, {"10g", "0.2", "", 2048}, {"1g", "", "100m", 100},
	} {
		conf := actor.NewConf().Set(KeyContainerImage, "i").Set(cluster.KeyExecutorMemory, tc.mem)
		if tc.factor != "" {
			conf.Set(KeyMemoryOverheadFactor, tc.factor)
		}
		if tc.over != "" {
			conf.Set(KeyExecutorMemoryOverhead, tc.over)
		}
		c, err := parseConfig(conf, "a")
		if err != nil || c.ExecutorOverheadMiB != tc.want {
			t.Errorf("%+v: overhead %v, %v; want %d", tc, c, err, tc.want)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
	}{
		{"no image", "", ""},
		{"bad namespace", KeyNamespace, "Not_A_Namespace"},
		{"bad prefix", KeyExecutorPodNamePrefix, "UPPER"},
		{"long prefix", KeyExecutorPodNamePrefix, strings.Repeat("a", 48)},
		{"reserved label", KeyExecutorLabelPrefix + LabelRole, "x"},
		{"bad label value", KeyExecutorLabelPrefix + "a", "not valid!"},
		{"bad batch size", KeyBatchSize, "0"},
		{"bad readiness timeout", KeyDriverReadinessTimeout, "0s"},
		{"bad factor", KeyMemoryOverheadFactor, "2"},
		{"bad cores", cluster.KeyExecutorCores, "0"},
		{"bad pull policy", KeyImagePullPolicy, "Sometimes"},
		{"bad cpu limit", KeyExecutorLimitCores, "lots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			if tc.name != "no image" {
				conf.Set(KeyContainerImage, "img")
			}
			if tc.key != "" {
				conf.Set(tc.key, tc.value)
			}
			_, err := parseConfig(conf, "a")
			var ce *actor.ConfError
			if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("parseConfig = %v; want ErrInvalidConfig with a ConfError", err)
			}
			if tc.key != "" && ce.Key != tc.key {
				t.Fatalf("error names %s, want %s", ce.Key, tc.key)
			}
		})
	}
}

func TestResourceNamePrefix(t *testing.T) {
	for _, name := range []string{"SparkPi", "my app_2", "123abc", strings.Repeat("long", 30), "--x--"} {
		p := ResourceNamePrefix(name)
		if len(p) > maxPrefixLen || !dnsLabelRe.MatchString(p) || p[0] >= '0' && p[0] <= '9' {
			t.Errorf("ResourceNamePrefix(%q) = %q", name, p)
		}
	}
	if a, b := ResourceNamePrefix("x"), ResourceNamePrefix("x"); a == b {
		t.Errorf("two prefixes are equal: %s", a)
	}
	if l := AppNameLabel("My App/1"); l != "my-app-1" {
		t.Errorf("AppNameLabel = %q", l)
	}
}

func TestParseSubmissionID(t *testing.T) {
	for _, tc := range []struct{ in, ns, pod string }{
		{"spark:app-driver", "spark", "app-driver"}, {"app-*", "default", "app-*"}, {"ns:sparkpi-*-driver", "ns", "sparkpi-*-driver"},
	} {
		ns, pod, err := ParseSubmissionID(tc.in, "default")
		if err != nil || ns != tc.ns || pod != tc.pod {
			t.Errorf("ParseSubmissionID(%q) = %q, %q, %v", tc.in, ns, pod, err)
		}
	}
	for _, bad := range []string{"", "ns:", ":pod", "a:b:c", "NS:pod", "ns:[x"} {
		if _, _, err := ParseSubmissionID(bad, "default"); !errors.Is(err, ErrInvalidSubmissionID) {
			t.Errorf("ParseSubmissionID(%q) = %v", bad, err)
		}
	}
}

// TestClientCredentials checks which credential a client uses, that the
// master's server overrides the kubeconfig's, and that errors are typed:
// a real HTTP server answers 401 and 403.
func TestClientCredentials(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://kube.invalid:6443", insecure-skip-tls-verify: true}
users:
- name: u1
  user: {token: kubeconfig-token}
contexts:
- name: ctx1
  context: {cluster: c1, user: u1}
current-context: ctx1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	var gotAuth string
	status := http.StatusUnauthorized
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		reason := map[int]string{401: "Unauthorized", 403: "Forbidden"}[status]
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + reason + `","code":` +
			map[int]string{401: "401", 403: "403"}[status] + `,"details":{"kind":"namespaces","name":"jobs"}}`))
	}))
	defer srv.Close()

	conf := actor.NewConf()
	c, err := newAPIClient(conf, apiClientOptions{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != srv.URL || !strings.Contains(c.Credential, `user "u1"`) {
		t.Fatalf("server %s credential %q", c.Server, c.Credential)
	}
	err = c.CheckAccess(t.Context(), "jobs")
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), `user "u1"`) ||
		gotAuth != "Bearer kubeconfig-token" {
		t.Fatalf("CheckAccess = %v (auth %q)", err, gotAuth)
	}

	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte("file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf.Set(KeyAuthSubmissionPrefix+AuthOAuthTokenFile, tokFile)
	c, err = newAPIClient(conf, apiClientOptions{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	status = http.StatusForbidden
	err = c.CheckAccess(t.Context(), "jobs")
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "list") || !strings.Contains(err.Error(), `"jobs"`) ||
		gotAuth != "Bearer file-token" || !strings.Contains(c.Credential, tokFile) {
		t.Fatalf("CheckAccess = %v (auth %q, credential %q)", err, gotAuth, c.Credential)
	}

	conf.Set(KeyAuthSubmissionPrefix+AuthOAuthToken, "x")
	if _, err := newAPIClient(conf, apiClientOptions{Server: srv.URL}); !errors.Is(err, ErrCredentials) {
		t.Fatalf("token and token file: %v", err)
	}
}

func TestClientUnreachable(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	// A listener that never answers: the request timeout bounds the call.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	conf := actor.NewConf().Set(KeySubmissionRequestTimeout, "300ms")
	c, err := newAPIClient(conf, apiClientOptions{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = c.CheckAccess(t.Context(), "default")
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), KeySubmissionRequestTimeout) {
		t.Fatalf("CheckAccess = %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %s", d)
	}
}
