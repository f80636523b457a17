package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// errNotSupported is returned for the container operations a process node does not offer.
var errNotSupported = errors.New("not supported by sparkrpc-kubelet (pods are local processes)")

type providerConfig struct {
	nodeName   string
	nodeIP     string
	pathPrefix string
	// images maps an image reference to the folder that stands for its
	// file system's programs: a pod's command is looked up there first.
	images    map[string]string
	rootDir   string
	apiServer string               // URL of the API server, for KUBERNETES_SERVICE_HOST/PORT
	client    kubernetes.Interface // for service-account tokens
	logger    *slog.Logger
}

// provider runs pods as local processes. It implements nodeutil.Provider and node.PodNotifier.
type provider struct {
	cfg     providerConfig
	listers nodeutil.ProviderConfig // set once by NewNode, before any pod is synced
	started time.Time

	mu     sync.Mutex
	pods   map[string]*podProc // by namespace/name
	notify func(*corev1.Pod)
	closed bool
	wg     sync.WaitGroup // one per running process
}

// podProc is a pod and the process of its first container. Guarded by provider.mu.
type podProc struct {
	pod      *corev1.Pod // our copy, with the status we report
	dir      string      // working directory and logs
	logPath  string      // log of the first container
	proc     *os.Process // nil when the process did not start
	exited   chan struct{}
	deleting bool
	// unpulled is true for a pod whose image cannot be pulled (imagepull.go).
	unpulled bool
	killer   *time.Timer
	refresh  *time.Timer // of the service-account tokens
}

func newProvider(cfg providerConfig) *provider {
	return &provider{cfg: cfg, pods: map[string]*podProc{}, started: time.Now()}
}

func podKey(namespace, name string) string { return namespace + "/" + name }

// NotifyPods implements node.PodNotifier.
func (p *provider) NotifyPods(_ context.Context, f func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = f
}

// notifyLocked reports pp's current pod; the caller holds p.mu. The callback only enqueues.
func (p *provider) notifyLocked(pp *podProc) {
	if p.notify != nil && !p.closed {
		p.notify(pp.pod.DeepCopy())
	}
}

// CreatePod starts the pod's first container as a process.
func (p *provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	key := podKey(pod.Namespace, pod.Name)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errors.New("node is shutting down")
	}
	if old, ok := p.pods[key]; ok {
		p.mu.Unlock()
		if old.pod.UID == pod.UID {
			return nil
		}
		return fmt.Errorf("pod %s: an earlier pod of that name (uid %s) is still terminating", key, old.pod.UID)
	}
	if len(pod.Spec.Containers) == 0 {
		p.mu.Unlock()
		return errdefs.InvalidInputf("pod %s has no container", key)
	}
	pp := &podProc{pod: pod.DeepCopy(), exited: make(chan struct{})}
	now := metav1.Now()
	pp.pod.Status = p.baseStatus(pp.pod, now)
	pp.pod.Status.Phase = corev1.PodPending
	p.setContainerState(pp.pod, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}, false, "")
	pp.dir = filepath.Join(p.cfg.rootDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
	pp.logPath = filepath.Join(pp.dir, pod.Spec.Containers[0].Name+".log")
	p.pods[key] = pp
	if unpullable(pod.Spec.Containers[0].Image) {
		p.failPullLocked(pp)
		p.mu.Unlock()
		return nil
	}
	p.notifyLocked(pp)
	spec := pp.pod.DeepCopy()
	p.mu.Unlock()

	// The volumes take API requests (service-account tokens): not under the node's lock.
	vols, err := p.mountVolumes(ctx, spec, pp.dir)

	var final *corev1.Pod // deleted while its volumes were made: remove it from the API
	defer func() {
		if final != nil {
			p.finishDeletion(final)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && (pp.deleting || p.closed) {
		err = errors.New("deleted before it started")
	}
	if err == nil {
		err = p.start(pp, vols)
	}
	if err != nil {
		final = p.startFailedLocked(key, pp, now, err)
		return nil
	}
	p.cfg.logger.Info("pod started", "pod", key, "pid", pp.proc.Pid)
	pp.pod.Status.Phase = corev1.PodRunning
	p.setContainerState(pp.pod, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}, true, containerID(pp.proc.Pid))
	p.setConditions(pp.pod, true, "")
	p.notifyLocked(pp)
	if len(vols.tokens) > 0 {
		go p.refreshTokens(pp, vols.tokens, vols.expiry) // takes p.mu
	}
	return nil
}

// startFailedLocked reports that pp's container could not start (err): the
// pod fails with reason StartError. It returns the pod to remove from the
// API when it was deleted meanwhile, else nil. The caller holds p.mu.
func (p *provider) startFailedLocked(key string, pp *podProc, started metav1.Time, err error) *corev1.Pod {
	unmount(pp.dir)
	p.cfg.logger.Warn("pod failed to start", "pod", key, "err", err)
	close(pp.exited)
	pp.pod.Status.Phase = corev1.PodFailed
	pp.pod.Status.Message = err.Error()
	p.setContainerState(pp.pod, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 128, Reason: "StartError", Message: err.Error(), StartedAt: started, FinishedAt: metav1.Now(),
	}}, false, "")
	p.setConditions(pp.pod, false, "PodFailed")
	p.notifyLocked(pp)
	if pp.deleting {
		p.forgetLocked(key, pp)
		if !p.closed {
			return pp.pod.DeepCopy()
		}
	}
	return nil
}

// start runs the first container of pp's pod, whose volumes are vols; the
// caller holds p.mu.
func (p *provider) start(pp *podProc, vols *podVolumes) error {
	pod := pp.pod
	c := &pod.Spec.Containers[0]
	env, err := p.containerEnv(pod, c)
	if err != nil {
		return fmt.Errorf("container %s: environment: %w", c.Name, err)
	}
	if vols.kubeconfig != "" && !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "KUBECONFIG=") }) {
		env = append(env, "KUBECONFIG="+vols.kubeconfig)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	mapping := expansion.MappingFuncFor(vars)
	var argv []string
	for _, s := range c.Command {
		argv = append(argv, vols.localize(expansion.Expand(s, mapping)))
	}
	for _, s := range c.Args {
		argv = append(argv, vols.localize(expansion.Expand(s, mapping)))
	}
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		env[i] = k + "=" + vols.localize(v)
	}
	if len(argv) == 0 {
		return fmt.Errorf("container %s has neither command nor args (the image is not run by this node)", c.Name)
	}
	path, err := p.commandPath(c.Image, argv[0], vars["PATH"])
	if err != nil {
		return fmt.Errorf("container %s: %w", c.Name, err)
	}
	logf, err := os.OpenFile(pp.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        argv,
		Env:         env,
		Dir:         pp.dir,
		Stdout:      logf,
		Stderr:      logf,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("container %s: %w", c.Name, err)
	}
	pp.proc = cmd.Process
	p.wg.Add(1)
	go p.wait(pp, cmd, logf)
	return nil
}

// wait reaps the process, kills what is left of its group (as a container runtime tears down the
// container) and reports the terminal state.
func (p *provider) wait(pp *podProc, cmd *exec.Cmd, logf *os.File) {
	defer p.wg.Done()
	_ = cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	logf.Close()
	unmount(pp.dir) // the pod has ended: its secrets leave the disk

	st := cmd.ProcessState
	code := st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	var final *corev1.Pod // a deleted pod whose process has ended, to remove from the API
	defer func() {
		if final != nil {
			p.finishDeletion(final)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if pp.killer != nil {
		pp.killer.Stop()
	}
	if pp.refresh != nil {
		pp.refresh.Stop()
	}
	close(pp.exited)
	term := &corev1.ContainerStateTerminated{ExitCode: int32(code), FinishedAt: metav1.Now(), ContainerID: containerID(cmd.Process.Pid)}
	if cs := pp.pod.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Running != nil {
		term.StartedAt = cs[0].State.Running.StartedAt
	}
	if code == 0 {
		term.Reason = "Completed"
		pp.pod.Status.Phase = corev1.PodSucceeded
	} else {
		term.Reason = "Error"
		pp.pod.Status.Phase = corev1.PodFailed
	}
	p.setContainerState(pp.pod, corev1.ContainerState{Terminated: term}, false, term.ContainerID)
	p.setConditions(pp.pod, false, "PodCompleted")
	key := podKey(pp.pod.Namespace, pp.pod.Name)
	p.cfg.logger.Info("pod process exited", "pod", key, "exitCode", code)
	p.notifyLocked(pp)
	if pp.deleting {
		p.forgetLocked(key, pp)
		if !p.closed {
			final = pp.pod.DeepCopy()
		}
	}
}

// forgetLocked drops a deleted pod whose process has ended, with its directory.
func (p *provider) forgetLocked(key string, pp *podProc) {
	if p.pods[key] == pp {
		delete(p.pods, key)
	}
	if pp.dir != "" {
		_ = os.RemoveAll(pp.dir)
	}
}

// UpdatePod takes the pod's new metadata and spec; a running process is not changed.
func (p *provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pp, ok := p.pods[podKey(pod.Namespace, pod.Name)]
	if !ok || pp.pod.UID != pod.UID {
		return errdefs.NotFoundf("pod %s/%s not found", pod.Namespace, pod.Name)
	}
	status := pp.pod.Status
	pp.pod = pod.DeepCopy()
	pp.pod.Status = status
	return nil
}

// DeletePod sends SIGTERM to the pod's process group and SIGKILL after the grace period. The
// terminal status is reported when the process has ended.
func (p *provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	key := podKey(pod.Namespace, pod.Name)
	if final := p.deleteUnpulled(key, pod); final != nil {
		p.finishDeletion(final)
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pp, ok := p.pods[key]
	if !ok || pp.pod.UID != pod.UID {
		return errdefs.NotFoundf("pod %s not found", key)
	}
	if pp.deleting {
		return nil
	}
	pp.deleting = true
	select {
	case <-pp.exited:
		p.notifyLocked(pp)
		p.forgetLocked(key, pp)
		return nil
	default:
	}
	if pp.proc == nil {
		return nil // still starting: CreatePod will not run it
	}
	grace := 30 * time.Second
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	pgid := pp.proc.Pid
	p.cfg.logger.Info("stopping pod", "pod", key, "grace", grace)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	pp.killer = time.AfterFunc(grace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	return nil
}

// GetPod returns our copy of the pod.
func (p *provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pp, ok := p.pods[podKey(namespace, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s not found", namespace, name)
	}
	return pp.pod.DeepCopy(), nil
}

// GetPodStatus returns the status we report for the pod.
func (p *provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods returns every pod the node knows.
func (p *provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(p.pods))
	for _, pp := range p.pods {
		out = append(out, pp.pod.DeepCopy())
	}
	return out, nil
}

// shutdown stops every pod's process group: SIGTERM, SIGKILL after grace, and waits for them.
func (p *provider) shutdown(grace time.Duration) {
	p.mu.Lock()
	p.closed = true
	var groups []int
	for _, pp := range p.pods {
		select {
		case <-pp.exited:
		default:
			if pp.proc != nil {
				groups = append(groups, pp.proc.Pid)
			}
		}
	}
	p.mu.Unlock()
	for _, g := range groups {
		_ = syscall.Kill(-g, syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	for _, g := range groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cfg.logger.Error("pod processes did not end after SIGKILL")
	}
}

// RunInContainer is not supported.
func (p *provider) RunInContainer(context.Context, string, string, string, []string, api.AttachIO) error {
	return errNotSupported
}

// AttachToContainer is not supported.
func (p *provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errNotSupported
}

// PortForward is not supported (pods listen on the host's loopback directly).
func (p *provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errNotSupported
}

// GetStatsSummary reports the node and its pods, without usage figures.
func (p *provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: p.cfg.nodeName, StartTime: metav1.NewTime(p.started)}}
	for _, pp := range p.pods {
		ps := statsv1alpha1.PodStats{PodRef: statsv1alpha1.PodReference{Name: pp.pod.Name, Namespace: pp.pod.Namespace, UID: string(pp.pod.UID)}}
		if pp.pod.Status.StartTime != nil {
			ps.StartTime = *pp.pod.Status.StartTime
		}
		s.Pods = append(s.Pods, ps)
	}
	return s, nil
}

// GetMetricsResource reports no metrics.
func (p *provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, nil
}

// commandPath finds the program of a container running image: in the
// image's folder (providerConfig.images) first, then in path.
func (p *provider) commandPath(image, command, path string) (string, error) {
	if dir, ok := p.cfg.images[image]; ok {
		path = dir + string(filepath.ListSeparator) + path
	}
	return lookPath(command, path)
}
