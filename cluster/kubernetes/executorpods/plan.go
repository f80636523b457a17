package executorpods

// plan.go is the allocator's decision core (Spark's ExecutorPodsAllocator and
// ExecutorPodsLifecycleManager without their I/O): given a snapshot of the
// executor pods and what the allocator knows, it says which pods to create,
// which to delete and which executors are lost, and why. It does no I/O and
// reads no clock, so table tests drive it.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
)

// podPhase is an executor pod's state as the allocator sees it.
type podPhase int

// Pod phases.
const (
	podPending podPhase = iota
	podRunning
	// podDecommissioning is a pod being deleted whose container still
	// runs (a node drain, a spot preemption, a user's delete): its
	// executor finishes its tasks within the grace period. Not an end.
	podDecommissioning
	// podSucceeded and the phases after it are ends.
	podSucceeded
	podFailed
	// podDeleted is a pod that was deleted (or is being deleted) before it ended.
	podDeleted
)

func (p podPhase) String() string {
	return [...]string{"Pending", "Running", "Decommissioning", "Succeeded", "Failed", "Deleted"}[p]
}

func (p podPhase) terminal() bool { return p >= podSucceeded }

// startFailures are the reasons of a container waiting that will not start
// without a change to the pod or the cluster: its executor fails at once.
var startFailures = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "CreateContainerConfigError": true}

// StartFailure returns why a container of pod (an init container first)
// cannot start without a change to the pod or the cluster (one of
// ErrImagePull, ImagePullBackOff, InvalidImageName,
// CreateContainerConfigError), with its image and the kubelet's message;
// reason is "" when none is in that state. Submit fails a driver pod
// with it, as the allocator fails an executor.
func StartFailure(pod *corev1.Pod) (reason, image, message string) {
	for _, cs := range pod.Status.InitContainerStatuses {
		if w := cs.State.Waiting; w != nil && startFailures[w.Reason] {
			return w.Reason, initContainerImage(pod, cs), w.Message
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && startFailures[w.Reason] {
			return w.Reason, containerImage(pod, cs), w.Message
		}
	}
	return "", "", ""
}

// executorPodState is one executor pod in a snapshot.
type executorPodState struct {
	ID      int64
	Name    string
	Phase   podPhase
	Created time.Time
	// Scheduled is true once the pod is bound to a node.
	Scheduled bool
	// Reason explains a terminal phase (exit code, OOMKilled, Evicted, ...).
	Reason string
	// ExitCode is the container's exit code in a terminal phase (-1 unknown).
	ExitCode int32
	// GraceEnd is when a decommissioning pod's grace period ends (its
	// deletion timestamp).
	GraceEnd time.Time
	// StartFailure is the reason its container cannot start (one of
	// startFailures), and Image its image; the pod's phase is then
	// podFailed.
	StartFailure, Image string
}

// planInput is what a planning round knows.
type planInput struct {
	Now time.Time
	// Target is the number of executors wanted.
	Target int
	// Pods is the snapshot of the executor pods, by executor id.
	Pods map[int64]executorPodState
	// Created are pods created but not yet in a snapshot, with their creation time.
	Created map[int64]time.Time
	// Handled are the executors whose end was already handled.
	Handled map[int64]bool
	// Killed are executors the driver killed (their end is no failure).
	Killed map[int64]bool
	// Deleting are pods whose deletion was already asked for.
	Deleting map[int64]bool
	// NextID is the id of the next executor to create.
	NextID int64
	// SinceLastBatch is the time since the last pods were created.
	SinceLastBatch time.Duration
	// DeleteAfter holds the pods whose deletion failed: they are asked for
	// again, if still needed, only from that time on (backoff).
	DeleteAfter map[int64]time.Time
	// Decommissioned are the executors the driver was told are
	// decommissioning.
	Decommissioned map[int64]bool
	// CreateAfter, when set, is the earliest time to create pods again
	// after a failed creation (backoff).
	CreateAfter time.Time
	// RefusedSince, when set, is when the cluster's policy (a quota, an
	// admission check) began refusing executor pods with no pod created
	// since; RefusedBy is its last refusal.
	RefusedSince time.Time
	RefusedBy    string
}

// loss is an executor whose pod ended.
type loss struct {
	ID     int64
	Name   string
	Reason string
	// Failure is true when the end counts as an executor failure.
	Failure bool
}

// plan is what a planning round decides.
type plan struct {
	// Create are the executor ids of the pods to create, in order.
	Create []int64
	// Delete are the pods to delete, with why.
	Delete []podDeletion
	// Lost are the executors whose pods ended since the last round.
	Lost []loss
	// Forget are created pods never seen, past the timeout: forget them.
	Forget []int64
	// Running, Pending and Wanted are the counts after this round.
	Running, Pending, Wanted int
	// Stalled says the allocation cannot progress, and why.
	Stalled string
	// Decommission are the executors whose pods began decommissioning:
	// tell the driver, once.
	Decommission []podDeletion
	// GiveUp, when set, ends the application: no executor runs, and the
	// cluster's policy refused every executor pod for longer than
	// spark.kubernetes.allocation.executor.timeout.
	GiveUp string
}

type podDeletion struct {
	ID     int64
	Name   string
	Reason string
}

// decide plans a round.
func decide(cfg *kubeconf.Config, in planInput) plan {
	var p plan
	running, pendingIDs := p.classifyPods(cfg, in)
	unseen := p.expireUnseen(cfg, in)
	pending := p.deleteExcess(in, pendingIDs, running+len(pendingIDs)+unseen-in.Target)
	p.Running, p.Pending, p.Wanted = running, pending+unseen, in.Target
	p.createBatch(cfg, in, in.Target-running-pending-unseen, pending, unseen)
	p.giveUp(cfg, in, running)
	return p
}

// giveUp ends the application when the cluster's policy has refused every
// executor pod for longer than spark.kubernetes.allocation.executor.timeout
// and no executor runs; with executors running, the application goes on
// with them (as Spark, which logs and retries).
func (p *plan) giveUp(cfg *kubeconf.Config, in planInput, running int) {
	if in.RefusedSince.IsZero() || running > 0 || in.Target == 0 || in.Now.Sub(in.RefusedSince) <= cfg.ExecutorTimeout {
		return
	}
	p.GiveUp = fmt.Sprintf("no executor pod could be created for %s (%s) and none runs: %s",
		in.Now.Sub(in.RefusedSince).Round(time.Second), kubeconf.KeyExecutorTimeout, in.RefusedBy)
}

// deferred reports whether a pod whose deletion failed waits before it is
// deleted again.
func deferred(in planInput, id int64) bool {
	at, ok := in.DeleteAfter[id]
	return ok && in.Now.Before(at)
}

// classifyPods goes through the pods of the snapshot, in executor order:
// ended pods are lost (once) and deleted, pods pending past
// spark.kubernetes.allocation.executor.timeout are deleted; it returns how
// many run and which others are pending.
func (p *plan) classifyPods(cfg *kubeconf.Config, in planInput) (running int, pendingIDs []int64) {
	ids := make([]int64, 0, len(in.Pods))
	for id := range in.Pods {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		st := in.Pods[id]
		if st.Phase.terminal() {
			if !in.Handled[id] {
				p.Lost = append(p.Lost, loss{ID: id, Name: st.Name, Reason: lossReason(st), Failure: !in.Killed[id] && isFailure(st)})
			}
			if st.Phase != podDeleted && cfg.DeleteOnTermination && !in.Deleting[id] && !deferred(in, id) {
				p.Delete = append(p.Delete, podDeletion{ID: id, Name: st.Name, Reason: "its executor ended"})
			}
			continue
		}
		if st.Phase == podDecommissioning {
			p.decommissioning(in, st)
			continue // on its way out: neither running nor pending
		}
		if in.Deleting[id] || deferred(in, id) {
			continue // on its way out: neither running nor pending
		}
		if in.Killed[id] {
			// The driver killed it and the deletion failed: again.
			p.Delete = append(p.Delete, podDeletion{ID: id, Name: st.Name, Reason: "the driver killed its executor"})
			continue
		}
		if st.Phase == podRunning {
			running++
			continue
		}
		if !st.Created.IsZero() && in.Now.Sub(st.Created) > cfg.ExecutorTimeout {
			p.Delete = append(p.Delete, podDeletion{ID: id, Name: st.Name,
				Reason: fmt.Sprintf("it was pending for more than %s (%s)", cfg.ExecutorTimeout, kubeconf.KeyExecutorTimeout)})
			continue
		}
		pendingIDs = append(pendingIDs, id)
	}
	return running, pendingIDs
}

// decommissioning handles a pod being deleted whose container still runs
// (Spark's PodRunning with a deletion timestamp): its executor is not lost
// while it finishes its tasks, only once its pod is gone or its grace
// period has ended; the driver is told, once, that it is decommissioning
// (unless the allocator or the driver deleted it).
func (p *plan) decommissioning(in planInput, st executorPodState) {
	switch {
	case in.Handled[st.ID]:
	case !st.GraceEnd.IsZero() && in.Now.After(st.GraceEnd):
		p.Lost = append(p.Lost, loss{ID: st.ID, Name: st.Name,
			Reason: fmt.Sprintf("The executor with id %d was deleted by a user or the framework and still ran at the end of its grace period.", st.ID)})
	case !in.Decommissioned[st.ID] && !in.Killed[st.ID] && !in.Deleting[st.ID]:
		p.Decommission = append(p.Decommission, podDeletion{ID: st.ID, Name: st.Name,
			Reason: fmt.Sprintf("pod %s is being deleted (grace period until %s)", st.Name, st.GraceEnd.Format(time.RFC3339))})
	}
}

// expireUnseen goes through the pods created but not yet in a snapshot:
// past the timeout, it deletes them (they may exist) and forgets them. It
// returns how many others there are.
func (p *plan) expireUnseen(cfg *kubeconf.Config, in planInput) (unseen int) {
	for id, at := range in.Created {
		if _, seen := in.Pods[id]; seen {
			continue
		}
		if in.Now.Sub(at) > cfg.ExecutorTimeout {
			p.Forget = append(p.Forget, id)
			p.Delete = append(p.Delete, podDeletion{ID: id, Name: PodName(cfg.PodNamePrefix, id),
				Reason: fmt.Sprintf("it was not seen within %s of its creation (%s)", cfg.ExecutorTimeout, kubeconf.KeyExecutorTimeout)})
			continue
		}
		unseen++
	}
	slices.Sort(p.Forget)
	return unseen
}

// deleteExcess deletes up to excess of the pending pods pendingIDs (in
// executor order), the newest (least likely bound) first, and returns how
// many stay pending.
func (p *plan) deleteExcess(in planInput, pendingIDs []int64, excess int) (pending int) {
	pending = len(pendingIDs)
	for i := len(pendingIDs) - 1; i >= 0 && excess > 0; i-- {
		id := pendingIDs[i]
		p.Delete = append(p.Delete, podDeletion{ID: id, Name: in.Pods[id].Name, Reason: "fewer executors are wanted"})
		pending--
		excess--
	}
	return pending
}

// createBatch plans the next batch of pods when missing executors are
// wanted: none while pods of the last batch are unseen (as Spark, it waits
// for them) or within spark.kubernetes.allocation.batch.delay of it; at
// most batch.size, and no more than maxPendingPods pending (else the plan
// says it is stalled); none before in.CreateAfter (a failed creation's
// backoff).
func (p *plan) createBatch(cfg *kubeconf.Config, in planInput, missing, pending, unseen int) {
	if missing <= 0 || unseen > 0 || in.SinceLastBatch < cfg.BatchDelay || in.Now.Before(in.CreateAfter) {
		return
	}
	n := min(missing, cfg.BatchSize, cfg.MaxPendingPods-pending)
	if n <= 0 {
		p.Stalled = fmt.Sprintf("%d executor pods are pending, the most allowed (%s=%d)", pending, kubeconf.KeyMaxPendingPods, cfg.MaxPendingPods)
		return
	}
	for i := range int64(n) {
		p.Create = append(p.Create, in.NextID+i)
	}
	p.Pending += n
}

// isFailure says whether a pod's end counts as an executor failure: a
// non-zero exit of its own, not a deletion or an eviction.
func isFailure(st executorPodState) bool {
	return st.Phase == podFailed && !strings.Contains(st.Reason, "Evicted")
}

// lossReason is the loss reason of an ended executor pod (Spark's
// ExecutorPodsLifecycleManager messages).
func lossReason(st executorPodState) string {
	switch st.Phase {
	case podDeleted:
		if st.Reason != "" {
			return fmt.Sprintf("The executor with id %d was deleted by a user or the framework (%s).", st.ID, st.Reason)
		}
		return fmt.Sprintf("The executor with id %d was deleted by a user or the framework.", st.ID)
	case podSucceeded:
		return fmt.Sprintf("The executor with id %d exited with exit code 0 (pod %s succeeded).", st.ID, st.Name)
	}
	if st.StartFailure != "" {
		return fmt.Sprintf("The executor with id %d could not start: %s for image %s. %s", st.ID, st.StartFailure, st.Image, st.Reason)
	}
	msg := fmt.Sprintf("The executor with id %d exited with exit code %s.", st.ID, describeExitCode(st.ExitCode))
	if st.Reason != "" {
		msg += " " + st.Reason
	}
	return msg
}

// describeExitCode is Spark's describeExitCode.
func describeExitCode(code int32) string {
	switch {
	case code == -1:
		return "unknown"
	case code == 137:
		return "137(SIGKILL, possible container OOM)"
	case code == 143:
		return "143(SIGTERM, probably a deletion or a node shutdown)"
	case code == 126:
		return "126(the command cannot run)"
	case code == 127:
		return "127(the command was not found)"
	case code > 128 && code < 160:
		return fmt.Sprintf("%d(signal %d)", code, code-128)
	}
	return fmt.Sprintf("%d", code)
}

// podState reads an executor pod's state from the API object. deleted is
// true for a pod gone from the API (or with a deletion timestamp).
func podState(pod *corev1.Pod, deleted bool) (executorPodState, bool) {
	var id int64
	if _, err := fmt.Sscan(pod.Labels[kubeconf.LabelExecutorID], &id); err != nil {
		return executorPodState{}, false
	}
	st := executorPodState{ID: id, Name: pod.Name, Created: pod.CreationTimestamp.Time, Scheduled: pod.Spec.NodeName != "", ExitCode: -1}
	var parts []string
	if pod.Status.Reason != "" {
		parts = append(parts, "The API gave the following brief reason: "+pod.Status.Reason+".")
	}
	if pod.Status.Message != "" {
		parts = append(parts, "The API gave the following message: "+pod.Status.Message)
	}
	for _, cs := range pod.Status.InitContainerStatuses {
		if w := cs.State.Waiting; w != nil && startFailures[w.Reason] && st.StartFailure == "" {
			parts = append(parts, fmt.Sprintf("Init container %s waiting: %s %s", cs.Name, w.Reason, w.Message))
			st.StartFailure, st.Image = w.Reason, initContainerImage(pod, cs)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			if st.ExitCode == -1 || cs.Name == kubeconf.ExecutorContainerName {
				st.ExitCode = t.ExitCode // Spark's container's, when it ended
			}
			d := fmt.Sprintf("Container %s terminated with exit code %d", cs.Name, t.ExitCode)
			if t.Reason != "" {
				d += ", reason " + t.Reason
			}
			if t.Message != "" {
				d += ": " + strings.TrimSpace(t.Message)
			}
			parts = append(parts, d+".")
			continue
		}
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			parts = append(parts, fmt.Sprintf("Container %s waiting: %s %s", cs.Name, w.Reason, w.Message))
			if startFailures[w.Reason] && st.StartFailure == "" {
				st.StartFailure, st.Image = w.Reason, containerImage(pod, cs)
			}
		}
	}
	st.Reason = strings.Join(parts, " ")
	ended, failed := containersEnded(pod)
	switch {
	case !deleted && pod.DeletionTimestamp != nil && pod.Status.Phase == corev1.PodRunning && st.ExitCode == -1:
		st.Phase, st.GraceEnd = podDecommissioning, pod.DeletionTimestamp.Time
	case deleted || pod.DeletionTimestamp != nil:
		st.Phase = podDeleted
	case st.StartFailure != "":
		st.Phase = podFailed
	case pod.Status.Phase == corev1.PodFailed, pod.Status.Phase == corev1.PodRunning && failed:
		st.Phase = podFailed
	case pod.Status.Phase == corev1.PodRunning && ended:
		st.Phase = podSucceeded
	case pod.Status.Phase == corev1.PodSucceeded:
		st.Phase = podSucceeded
	case pod.Status.Phase == corev1.PodRunning:
		st.Phase = podRunning
	default:
		st.Phase = podPending
	}
	return st, true
}

// containersEnded reports, for a pod that does not restart its containers
// (restartPolicy Never), whether Spark's container has ended, and whether
// any of its containers ended in failure: with a sidecar the pod stays
// Running after either, and, as Spark's
// spark.kubernetes.executor.checkAllContainers (on by default) does, the
// executor is then over.
func containersEnded(pod *corev1.Pod) (ended, failed bool) {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		return false, false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			failed = failed || t.ExitCode != 0
			ended = ended || cs.Name == kubeconf.ExecutorContainerName
		}
	}
	return ended, failed
}

// containerImage is the image of the container of cs.
func containerImage(pod *corev1.Pod, cs corev1.ContainerStatus) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == cs.Name {
			return c.Image
		}
	}
	return cs.Image
}

// initContainerImage is the image of the init container of cs.
func initContainerImage(pod *corev1.Pod, cs corev1.ContainerStatus) string {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == cs.Name {
			return c.Image
		}
	}
	return cs.Image
}
