package executorpods

// allocator.go is the I/O side of executor allocation (Spark's
// ExecutorPodsAllocator, ExecutorPodsLifecycleManager and
// ExecutorPodsWatchSnapshotSource): an informer (tools/cache) on the
// application's executor pods feeds a snapshot; each round asks decide
// (plan.go) what to do and does it through the API. It is the driver's
// endpoints.ClusterManager.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster/internal/recent"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ErrTooManyFailures is matched by the allocator's error once more executor
// pods failed than spark.executor.maxNumFailures allows.
var ErrTooManyFailures = errors.New("kubernetes: too many executor failures")

// Options are the allocator's collaborators.
type Options struct {
	// Owner, when set, is the executors' controller (the driver pod). The
	// allocator then waits, once at start, for that pod to be Ready
	// (spark.kubernetes.allocation.driver.readinessTimeout) before it
	// creates executor pods.
	Owner *metav1.OwnerReference
	// OnLost is called with an executor whose pod ended and why (the
	// driver's RemoveExecutor).
	OnLost func(id, reason string)
	// OnDecommission, when set, is called once with an executor whose pod
	// is being deleted while its container runs (a node drain, a
	// preemption): the driver should give it no new tasks while it
	// finishes its running ones. Its loss follows when the pod is gone.
	OnDecommission func(id, reason string)
	// Report, when set, receives lines for the user: a pod the scheduler
	// cannot place, allocation that cannot progress.
	Report func(line string)
	// ExecutorLogURL, when set, gives the log URL of executor id's pod
	// (its SPARK_LOG_URL_LOG; "": none), called when the pod is created.
	ExecutorLogURL func(id int64) string
	// Logger receives the allocator's log.
	Logger zerolog.Logger
}

// Allocator keeps an application's executor pods at the number the driver
// wants. It implements endpoints.ClusterManager.
type Allocator struct {
	cfg    *kubeconf.Config
	client *kubeclient.Client
	opts   Options
	log    zerolog.Logger
	// driverURL is what executors connect to (set by Start).
	driverURL string

	kick   chan struct{}
	failed chan error

	mu        sync.Mutex
	target    int
	pods      map[int64]executorPodState
	gone      map[int64]bool
	created   map[int64]time.Time
	handled   map[int64]bool
	killed    map[int64]bool
	deleting  map[int64]bool
	reasons   recent.Map[int64, string] // of the last maxLossReasons executors lost
	waiters   map[int64][]chan string
	nextID    int64
	lastBatch time.Time
	failures  int
	lastStall string
	stallAt   time.Time
	// Backoff and refusals of creations (refusals.go).
	createFailures int
	createAfter    time.Time
	refusedSince   time.Time
	refusedBy      string
	lastRefusal    string
	refusalAt      time.Time
	// Failed deletions, retried from deleteAfter on.
	deleteFailures map[int64]int
	deleteAfter    map[int64]time.Time
	decommissioned map[int64]bool
	// startReported are the start failures (reason and image) reported.
	startReported map[string]bool
	unsched       map[string]string // pod name -> last scheduler message reported
	started       bool
	stopped       bool
	done          chan struct{} // closed when run returns
	watchDone     chan struct{} // closed when the informer stops
	cancel        context.CancelFunc
}

// NewAllocator returns an allocator for cfg's application, which makes its
// requests with client; Start starts it.
func NewAllocator(cfg *kubeconf.Config, client *kubeclient.Client, opts Options) *Allocator {
	return &Allocator{cfg: cfg, client: client, opts: opts, log: opts.Logger.With().Str("component", "k8s-allocator").Logger(),
		kick: make(chan struct{}, 1), failed: make(chan error, 1), target: cfg.NumExecutors,
		pods: map[int64]executorPodState{}, gone: map[int64]bool{}, created: map[int64]time.Time{}, handled: map[int64]bool{},
		killed: map[int64]bool{}, deleting: map[int64]bool{}, reasons: recent.Map[int64, string]{Max: maxLossReasons}, waiters: map[int64][]chan string{},
		nextID: 1, unsched: map[string]string{}, done: make(chan struct{}), watchDone: make(chan struct{}),
		deleteFailures: map[int64]int{}, deleteAfter: map[int64]time.Time{}, decommissioned: map[int64]bool{}, startReported: map[string]bool{}}
}

// Failed delivers the error that ends the application: too many executor
// failures (ErrTooManyFailures), an API error that allocation cannot get
// past (401, an RBAC 403, a missing namespace, an invalid pod), or
// executor pods refused by the cluster's policy for too long with none
// running (ErrExecutorsRefused).
func (a *Allocator) Failed() <-chan error { return a.failed }

// Start starts watching the executor pods and allocating them, for the
// driver at driverURL (what executors connect to); it returns once the
// informer has synced (bounded by ctx) or with its error.
func (a *Allocator) Start(ctx context.Context, driverURL string) error {
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("kubernetes: allocator already started")
	}
	a.started = true
	a.driverURL = driverURL
	a.mu.Unlock()
	sel := Selector(a.cfg.AppID)
	pods := a.client.CoreV1().Pods(a.cfg.Namespace)
	inf := cache.NewSharedInformer(kubeclient.PodListWatch(pods, sel, ""), &corev1.Pod{}, 30*time.Second)
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		a.log.Warn().Err(err).Msg("executor pod watch failed; it resumes with a new list")
	})
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.observe(obj, false) },
		UpdateFunc: func(_, obj any) { a.observe(obj, false) },
		DeleteFunc: func(obj any) { a.observe(obj, true) },
	})
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go func() {
		defer close(a.watchDone)
		inf.RunWithContext(runCtx)
	}()
	sctx, scancel := context.WithTimeout(ctx, a.client.Timeout)
	defer scancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		cancel()
		<-a.watchDone
		_, err := pods.List(sctx, metav1.ListOptions{LabelSelector: sel, Limit: 1})
		if err == nil {
			err = sctx.Err()
		}
		return a.client.APIError(err, "watch", "pods", a.cfg.Namespace)
	}
	go a.run(runCtx)
	return nil
}

// observe puts a pod event into the snapshot.
func (a *Allocator) observe(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	st, ok := podState(pod, deleted)
	if !ok {
		return
	}
	var report string
	a.mu.Lock()
	if prev, seen := a.pods[st.ID]; seen && prev.Phase.terminal() && !st.Phase.terminal() {
		st = prev // never back from an end
	} else if seen && prev.Phase.terminal() && st.Phase == podDeleted {
		st = prev // keep the reason of its end
	}
	a.pods[st.ID] = st
	delete(a.created, st.ID)
	if deleted {
		a.gone[st.ID] = true
	}
	if key := st.StartFailure + " " + st.Image; st.StartFailure != "" && !a.startReported[key] {
		a.startReported[key] = true
		report = fmt.Sprintf("Executor pod %s cannot start: %s for image %s; it counts as an executor failure (%s=%d)",
			pod.Name, st.StartFailure, st.Image, "spark.executor.maxNumFailures", a.cfg.MaxExecutorFailures)
	} else if st.Phase == podPending {
		if msg := Unschedulable(pod); msg != "" && a.unsched[pod.Name] != msg {
			a.unsched[pod.Name] = msg
			report = fmt.Sprintf("Executor pod %s is pending: FailedScheduling: %s", pod.Name, msg)
		}
	} else {
		delete(a.unsched, pod.Name)
	}
	a.mu.Unlock()
	if report != "" {
		a.log.Warn().Str("pod", pod.Name).Msg(report)
		if a.opts.Report != nil {
			a.opts.Report(report)
		}
	}
	a.poke()
}

// Unschedulable returns the scheduler's reason for not placing pod (the
// message of its FailedScheduling event, as the PodScheduled condition
// carries it), or "". Submit reports the driver pod's with it too.
func Unschedulable(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

func (a *Allocator) poke() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *Allocator) run(ctx context.Context) {
	defer close(a.done)
	if a.opts.Owner != nil {
		a.awaitDriverReady(ctx, a.opts.Owner.Name)
		if ctx.Err() != nil {
			return
		}
	}
	t := time.NewTicker(a.cfg.BatchDelay)
	defer t.Stop()
	for {
		a.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
		case <-t.C:
		}
	}
}

// round plans and carries out one allocation round.
func (a *Allocator) round(ctx context.Context) {
	now := time.Now()
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return
	}
	p, wake, failures := a.planLocked(now)
	stall := a.stallToReport(p.Stalled, now)
	a.mu.Unlock()
	for _, w := range wake {
		w.ch <- w.reason
	}
	failed := a.reportLosses(p.Lost, failures)
	a.reportDecommissions(p.Decommission)
	if p.GiveUp != "" {
		a.fail(fmt.Errorf("%w: %s", ErrExecutorsRefused, p.GiveUp))
	}
	if stall != "" {
		line := fmt.Sprintf("Executor allocation cannot progress: wanted %d, pending %d, running %d: %s", p.Wanted, p.Pending, p.Running, stall)
		a.log.Warn().Int("wanted", p.Wanted).Int("pending", p.Pending).Int("running", p.Running).Msg(line)
		if a.opts.Report != nil {
			a.opts.Report(line)
		}
	}
	for _, d := range p.Delete {
		a.log.Info().Int64("executor", d.ID).Str("pod", d.Name).Msgf("Deleting executor pod %s: %s", d.Name, d.Reason)
		a.deletePod(ctx, d.ID, d.Name)
	}
	if len(p.Create) > 0 {
		a.log.Info().Int("count", len(p.Create)).Int("wanted", p.Wanted).Int("running", p.Running).Int("pending", p.Pending-len(p.Create)).
			Msgf("Going to request %d executors from Kubernetes", len(p.Create))
	}
	if failed {
		a.uncreate(p.Create) // the application ends: no more pods
		return
	}
	a.createPods(ctx, p.Create)
}

// planLocked plans a round at now and records the plan: the executors it
// decommissions and the losses it finds (returning the ExecutorLossReason
// calls to wake and the failures counted), the pods it forgets, deletes
// and creates. The round then carries it out. a.mu is held.
func (a *Allocator) planLocked(now time.Time) (p plan, wake []lossWaiter, failures int) {
	p = decide(a.cfg, planInput{Now: now, Target: a.target, Pods: a.pods, Created: a.created, Handled: a.handled,
		Killed: a.killed, Deleting: a.deleting, NextID: a.nextID, SinceLastBatch: now.Sub(a.lastBatch),
		DeleteAfter: a.deleteAfter, Decommissioned: a.decommissioned, CreateAfter: a.createAfter,
		RefusedSince: a.refusedSince, RefusedBy: a.refusedBy})
	for _, d := range p.Decommission {
		a.decommissioned[d.ID] = true
	}
	wake = a.recordLosses(p.Lost)
	a.recordPlan(p, now)
	a.forgetGonePods()
	return p, wake, a.failures
}

// lossWaiter is an ExecutorLossReason call to wake with reason.
type lossWaiter struct {
	ch     chan string
	reason string
}

// recordLosses records the reasons of the executors lost, counts their
// failures, and returns the ExecutorLossReason calls waiting for them.
// a.mu is held.
func (a *Allocator) recordLosses(lost []loss) []lossWaiter {
	var wake []lossWaiter
	for _, l := range lost {
		a.handled[l.ID] = true
		a.reasons.Put(l.ID, l.Reason)
		for _, ch := range a.waiters[l.ID] {
			wake = append(wake, lossWaiter{ch, l.Reason})
		}
		delete(a.waiters, l.ID)
		if l.Failure {
			a.failures++
		}
	}
	return wake
}

// recordPlan records the pods p forgets, deletes and creates. a.mu is held.
func (a *Allocator) recordPlan(p plan, now time.Time) {
	for _, id := range p.Forget {
		delete(a.created, id)
	}
	for _, d := range p.Delete {
		a.deleting[d.ID] = true
	}
	for _, id := range p.Create {
		a.created[id] = now
	}
	if len(p.Create) > 0 {
		a.nextID = p.Create[len(p.Create)-1] + 1
		a.lastBatch = now
	}
}

// forgetGonePods forgets the pods gone from the API whose end was handled
// (or that had not ended). a.mu is held.
func (a *Allocator) forgetGonePods() {
	for id, st := range a.pods {
		if a.gone[id] && (a.handled[id] || !st.Phase.terminal()) {
			delete(a.pods, id)
			delete(a.gone, id)
			delete(a.deleting, id)
			delete(a.unsched, st.Name)
			delete(a.deleteFailures, id)
			delete(a.deleteAfter, id)
			delete(a.decommissioned, id)
			delete(a.handled, id)
			delete(a.killed, id)
		}
	}
}

// maxLossReasons bounds the loss reasons an allocator keeps: the driver
// asks for an executor's as it loses it, and an application with dynamic
// allocation goes through any number of executors, so the most recent are
// kept and the oldest forgotten first.
const maxLossReasons = 1000

// stallToReport returns why allocation cannot progress (stalled, from the
// plan) when that is news: another reason than the last reported, or the
// same after 30 seconds; otherwise "". a.mu is held.
func (a *Allocator) stallToReport(stalled string, now time.Time) string {
	if stalled == "" || (stalled == a.lastStall && now.Sub(a.stallAt) <= 30*time.Second) {
		return ""
	}
	a.lastStall, a.stallAt = stalled, now
	return stalled
}

// reportLosses logs the executors lost and tells the driver (OnLost); the
// application fails once failures reach spark.executor.maxNumFailures, and
// then it reports true.
func (a *Allocator) reportLosses(lost []loss, failures int) (failed bool) {
	for _, l := range lost {
		ev := a.log.Info()
		if l.Failure {
			ev = a.log.Warn()
		}
		ev.Int64("executor", l.ID).Str("pod", l.Name).Msg(l.Reason)
		if a.opts.OnLost != nil {
			a.opts.OnLost(strconv.FormatInt(l.ID, 10), l.Reason)
		}
		if l.Failure && failures >= a.cfg.MaxExecutorFailures {
			a.fail(fmt.Errorf("%w: max number of executor failures (%d) reached (spark.executor.maxNumFailures); the last: %s",
				ErrTooManyFailures, a.cfg.MaxExecutorFailures, l.Reason))
			failed = true
		}
	}
	return failed
}

// reportDecommissions logs the executors whose pods began decommissioning
// and tells the driver (OnDecommission).
func (a *Allocator) reportDecommissions(ds []podDeletion) {
	for _, d := range ds {
		a.log.Info().Int64("executor", d.ID).Str("pod", d.Name).
			Msgf("Executor %d is decommissioning: %s; it finishes its running tasks, and is lost only once its pod is gone", d.ID, d.Reason)
		if a.opts.OnDecommission != nil {
			a.opts.OnDecommission(strconv.FormatInt(d.ID, 10), d.Reason)
		}
	}
}

func (a *Allocator) fail(err error) {
	select {
	case a.failed <- err:
	default:
	}
}

// Counts returns the executor pods running and pending now, and the number wanted.
func (a *Allocator) Counts() (running, pending, wanted int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, st := range a.pods {
		if a.deleting[id] || st.Phase.terminal() || st.Phase == podDecommissioning {
			continue
		}
		if st.Phase == podRunning {
			running++
		} else {
			pending++
		}
	}
	for id := range a.created {
		if _, ok := a.pods[id]; !ok {
			pending++
		}
	}
	return running, pending, a.target
}

// Stop stops allocating and, unless
// spark.kubernetes.executor.deleteOnTermination is false, deletes the
// executor pods and waits for them to be gone (bounded by ctx).
func (a *Allocator) Stop(ctx context.Context) error {
	a.mu.Lock()
	if a.stopped || !a.started {
		a.stopped = true
		a.mu.Unlock()
		return nil
	}
	a.stopped = true
	a.mu.Unlock()
	a.cancel()
	<-a.done
	<-a.watchDone
	if !a.cfg.DeleteOnTermination {
		return nil
	}
	return deleteExecutorPods(ctx, a.client, a.cfg.Namespace, a.cfg.AppID, a.log)
}
