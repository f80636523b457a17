package kubetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/kubetest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var binDir string

const skipMsg = "kubetest: " + kubetest.BinEnv + " is unset: the TestKubernetes* tests need the control-plane binaries; " +
	"build them with internal/kubetest/build-controlplane DIR and set " + kubetest.BinEnv + "=DIR"

func TestMain(m *testing.M) {
	binDir = os.Getenv(kubetest.BinEnv)
	if binDir == "" {
		fmt.Fprintln(os.Stderr, skipMsg)
	}
	goleak.VerifyTestMain(m,
		// klog (imported by client-go) starts its flush daemon in its package init; it runs for
		// the life of the process and is no leak of ours.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}

func needBin(t *testing.T) {
	t.Helper()
	if binDir == "" {
		t.Skip(skipMsg)
	}
}

func processPod(name string, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:    "main",
				Image:   "unused",
				Command: []string{"sh", "-c", script},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					{Name: "GREETING", Value: "hi from $(POD_NAME)"},
				},
			}},
		},
	}
}

func podLog(ctx context.Context, c kubernetes.Interface, name string) (string, error) {
	b, err := c.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	return string(b), err
}

// descendants are the pids of the live processes below pid (from /proc).
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// podCondition returns the status of pod's condition ct, or "" when it has none.
func podCondition(pod *corev1.Pod, ct corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func TestKubernetesControlPlane(t *testing.T) {
	needBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	started := time.Now()
	cp, err := kubetest.Start(ctx, binDir, kubetest.WithNodeCapacity("2", "4Gi", 20))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane ready in %s at %s (logs in %s)", time.Since(started).Round(time.Millisecond), cp.Server(), cp.LogDir())
	stopped := false
	defer func() {
		if !stopped {
			if t.Failed() {
				cp.KeepLogs()
			}
			_ = cp.Stop()
		}
	}()
	// The admin clientset shares its transport with the control plane's own client: Stop closes
	// its idle connections.
	c, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	pods := c.CoreV1().Pods("default")

	// A pod runs as a process: exit code, reason, environment and log come back.
	if _, err := pods.Create(ctx, processPod("exit3", `echo hi; echo "$POD_NAME $POD_NAMESPACE $POD_IP $NODE"; echo "$GREETING"; exit 3`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var failed *corev1.Pod
	testutil.EventuallyNoError(t, time.Minute, "pod exit3 Failed", func() error {
		p, err := pods.Get(ctx, "exit3", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodFailed {
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		failed = p
		return nil
	})
	if cs := failed.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil ||
		cs[0].State.Terminated.ExitCode != 3 || cs[0].State.Terminated.Reason != "Error" {
		t.Fatalf("container statuses = %+v, want terminated with exit code 3, reason Error", cs)
	}
	// An ended container is not ready, and neither is its pod.
	for _, ct := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		if st := podCondition(failed, ct); st != corev1.ConditionFalse {
			t.Fatalf("pod exit3 condition %s = %q after its process ended, want False", ct, st)
		}
	}
	logs, err := podLog(ctx, c, "exit3")
	if err != nil {
		t.Fatal(err)
	}
	if want := "hi\nexit3 default 127.0.0.1 sparkrpc-node-1\nhi from exit3\n"; logs != want {
		t.Fatalf("log = %q, want %q", logs, want)
	}

	// An object owned by a deleted pod is garbage-collected.
	owned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned-by-exit3", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Pod", Name: failed.Name, UID: failed.UID,
	}}}}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, owned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "exit3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, time.Minute, "config map owned by the deleted pod collected", func() error {
		_, err := c.CoreV1().ConfigMaps("default").Get(ctx, owned.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (err %v)", err)
	})

	// A running pod deleted with a long grace period is gone from the API as soon as its process has
	// ended on SIGTERM, as with a kubelet, not once the grace period has passed.
	stopper := processPod("stopper", "exec sleep 600")
	long := int64(600)
	stopper.Spec.TerminationGracePeriodSeconds = &long
	if _, err := pods.Create(ctx, stopper, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, time.Minute, "stopper running", func() error {
		p, err := pods.Get(ctx, "stopper", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		return nil
	})
	if err := pods.Delete(ctx, "stopper", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, time.Minute, "stopper gone from the API", func() error {
		_, err := pods.Get(ctx, "stopper", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (err %v)", err)
	})

	// Volumes: the service-account volume the API server adds and a config map, each at its mount
	// path relative to the working directory, and KUBECONFIG naming the pod's credentials.
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greeting"},
		Data: map[string]string{"text": "hello"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vols := processPod("volumes", `cat etc/greeting/text; echo; cat var/run/secrets/kubernetes.io/serviceaccount/namespace; echo; `+
		`test -s var/run/secrets/kubernetes.io/serviceaccount/token && test -s var/run/secrets/kubernetes.io/serviceaccount/ca.crt && `+
		`grep -q "tokenFile: .*/token" "$KUBECONFIG" && echo credentials`)
	vols.Spec.Volumes = []corev1.Volume{{Name: "greeting", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "greeting"}}}}}
	vols.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "greeting", MountPath: "/etc/greeting"}}
	if _, err := pods.Create(ctx, vols, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, time.Minute, "pod volumes Succeeded", func() error {
		p, err := pods.Get(ctx, "volumes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		return nil
	})
	if logs, err := podLog(ctx, c, "volumes"); err != nil || logs != "hello\ndefault\ncredentials\n" {
		t.Fatalf("log of pod volumes = %q, %v", logs, err)
	}

	// A Secret volume at an absolute mount path: the node reads the Secret from the API server,
	// writes its keys 0600 in a 0700 folder, and rewrites the mount path in the command line to
	// where it put them.
	if _, err := c.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw"},
		Data: map[string][]byte{"key": []byte("s3cr3t")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := processPod("secret-volume", `cat /etc/pw/key; echo; stat -L -c %a /etc/pw/key /etc/pw .`)
	sec.Spec.Volumes = []corev1.Volume{{Name: "pw", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "pw"}}}}
	sec.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "pw", MountPath: "/etc/pw", ReadOnly: true}}
	if _, err := pods.Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, time.Minute, "pod secret-volume Succeeded", func() error {
		p, err := pods.Get(ctx, "secret-volume", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		return nil
	})
	if logs, err := podLog(ctx, c, "secret-volume"); err != nil || logs != "s3cr3t\n600\n700\n700\n" {
		t.Fatalf("log of pod secret-volume = %q, %v", logs, err)
	}

	// A pod asking for more cpu than the node has stays Pending with the scheduler's reason.
	big := processPod("too-big", "exit 0")
	big.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")}
	if _, err := pods.Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, time.Minute, "FailedScheduling event for too-big", func() error {
		evs, err := c.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.name": "too-big", "reason": "FailedScheduling",
		}.String()})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "Insufficient cpu") {
				return nil
			}
		}
		return fmt.Errorf("no FailedScheduling event naming Insufficient cpu among %d", len(evs.Items))
	})
	if p, err := pods.Get(ctx, "too-big", metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Fatalf("too-big: err %v, phase %q, node %q; want Pending and unbound", err, p.Status.Phase, p.Spec.NodeName)
	}

	// Tokens added at run time authenticate at once; RBAC then decides.
	cp.AddToken("alice-token", "alice", "testers")
	asAlice := cp.RESTConfig()
	asAlice.BearerToken = "alice-token"
	alice := kubernetes.NewForConfigOrDie(asAlice)
	_, err = alice.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("alice listing pods: %v, want Forbidden", err)
	}
	asNobody := cp.RESTConfig()
	asNobody.BearerToken = "no-such-token"
	nobody := kubernetes.NewForConfigOrDie(asNobody)
	_, err = nobody.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("unknown token listing pods: %v, want Unauthorized", err)
	}
	closeIdle(asAlice, asNobody)

	// A running pod is stopped with the control plane; nothing is left behind.
	// In a pod's command $$ is an escaped $, as on any kubelet: $$$$ reaches the shell as $$.
	if _, err := pods.Create(ctx, processPod("sleeper", `echo pid $$$$; exec sleep 600`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var sleeperPid int
	testutil.EventuallyNoError(t, time.Minute, "sleeper running and logging its pid", func() error {
		l, err := podLog(ctx, c, "sleeper")
		if err != nil {
			return err
		}
		if _, err := fmt.Sscanf(l, "pid %d", &sleeperPid); err != nil {
			return fmt.Errorf("log %q: %v", l, err)
		}
		return nil
	})
	if !alive(sleeperPid) {
		t.Fatalf("sleeper pid %d is not alive", sleeperPid)
	}
	// Its process runs: the node reports the pod and its container Ready.
	testutil.EventuallyNoError(t, time.Minute, "sleeper Ready", func() error {
		p, err := pods.Get(ctx, "sleeper", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, ct := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
			if st := podCondition(p, ct); st != corev1.ConditionTrue {
				return fmt.Errorf("condition %s = %q", ct, st)
			}
		}
		if cs := p.Status.ContainerStatuses; len(cs) != 1 || !cs[0].Ready {
			return fmt.Errorf("container statuses %+v", cs)
		}
		return nil
	})
	if d := descendants(t, os.Getpid()); len(d) < 6 {
		t.Fatalf("descendants before Stop = %v, want at least the 5 components and the pod", d)
	}

	stopped = true
	if err := cp.Stop(); err != nil {
		cp.KeepLogs()
		t.Fatalf("Stop: %v", err)
	}
	if alive(sleeperPid) {
		t.Errorf("pod process %d survived Stop", sleeperPid)
	}
	if d := descendants(t, os.Getpid()); len(d) != 0 {
		t.Errorf("processes left after Stop: %v", d)
	}
	if _, err := os.Stat(cp.LogDir()); !os.IsNotExist(err) {
		t.Errorf("log dir %s not removed: %v", cp.LogDir(), err)
	}
}

// closeIdle drops the idle connections of the transports client-go cached for cfgs, so that no
// connection goroutine outlives the test.
func closeIdle(cfgs ...*rest.Config) {
	for _, cfg := range cfgs {
		if hc, err := rest.HTTPClientFor(cfg); err == nil {
			utilnet.CloseIdleConnectionsFor(hc.Transport)
		}
	}
}

func TestKubernetesStartNeedsBinaries(t *testing.T) {
	_, err := kubetest.Start(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "etcd") {
		t.Fatalf("Start with an empty bin dir: %v, want ErrMissingBinary naming etcd", err)
	}
	if !errors.Is(err, kubetest.ErrMissingBinary) {
		t.Fatalf("error %v is not ErrMissingBinary", err)
	}
}
