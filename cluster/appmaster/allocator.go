package appmaster

// This file holds the application master's allocator (Spark's
// YarnAllocator): it keeps the executors at their target, launches them in
// the containers it gets, and replaces the ones that fail.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/recent"
	"github.com/sparkrpc/sparkrpc/messages"
)

// executorContainer is an executor the allocator started (or is starting).
type executorContainer struct {
	executorID string
	container  *messages.RmContainer
	killed     bool
}

// lossReason is why an executor's container ended.
type lossReason struct {
	exitStatus  int32
	message     string
	causedByApp bool
}

// allocator keeps the application's executors at their target number: it
// heartbeats the resource manager with the number of containers it still
// needs, starts executors in the containers it gets, and counts and
// replaces the ones that fail (Spark's YarnAllocator).
type allocator struct {
	env       *actor.Env
	rm        *actor.Ref
	appID     string
	driverURL string
	resource  cluster.Resource
	log       zerolog.Logger
	progress  func() (total, done, running int)
	onLost    func(executorID, reason string)
	failed    chan error

	heartbeat, initialInterval time.Duration
	askTimeout                 actor.RpcTimeout // of an allocate heartbeat (KeyAMAllocateTimeout)
	maxFailures                int
	// execConf is the executors' conf file (ExecutorConfFile): the
	// application's conf without its secret, which an executor gets on a
	// pipe from its node manager when spark.authenticate is on.
	execConf []byte

	mu         sync.Mutex
	target     int
	running    map[string]*executorContainer  // by container id
	byExecutor map[string]string              // executor id -> container id
	reasons    recent.Map[string, lossReason] // of the last maxLossReasons executors lost
	release    []string
	// replies is the number of the last allocate reply received: the next
	// ask expects replies+1, and gets again what a lost reply carried.
	replies     int64
	failures    int
	nextID      int
	failedOnce  sync.Once
	numLaunched int
	waiting     map[string][]func(lossReason, bool)

	starts sync.WaitGroup // the goroutines that wait for containers' starts
}

func newAllocator(env *actor.Env, rm *actor.Ref, appID, driverURL string, target int, res cluster.Resource, conf *actor.Conf, log zerolog.Logger) (*allocator, error) {
	hb, err := conf.GetDuration(cluster.KeyHeartbeatIntervalMs, "1000", time.Millisecond)
	if err != nil {
		return nil, err
	}
	initial, err := conf.GetDuration(cluster.KeyInitialAllocInterval, "200ms", time.Millisecond)
	if err != nil {
		return nil, err
	}
	maxFailures, err := cluster.MaxExecutorFailures(conf, target)
	if err != nil {
		return nil, err
	}
	askTimeout, err := actor.NewRpcTimeout(conf, []string{cluster.KeyAMAllocateTimeout}, "30s")
	if err != nil {
		return nil, err
	}
	execConf := cluster.WithoutSecrets(conf.All())
	if cluster.AuthOn(conf) {
		execConf = cluster.ContainerAuthConf(execConf, "")
	}
	return &allocator{env: env, rm: rm, appID: appID, driverURL: driverURL, resource: res, target: target,
		execConf: cluster.PropertiesText(execConf),
		log:      log.With().Str("component", "allocator").Logger(), failed: make(chan error, 1),
		heartbeat: hb, initialInterval: initial, maxFailures: maxFailures, askTimeout: askTimeout,
		running: make(map[string]*executorContainer), byExecutor: make(map[string]string), reasons: recent.Map[string, lossReason]{Max: maxLossReasons}}, nil
}

// run heartbeats until ctx ends. It returns true when the resource manager
// says the application is gone. Either way it first ends the starts of
// containers it still waits for, and waits for their goroutines: such a
// start is not an executor lost.
func (a *allocator) run(ctx context.Context) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer a.starts.Wait()
	defer cancel()
	failures := 0
	for {
		shutdown, err := a.allocate(ctx)
		if shutdown {
			return true
		}
		interval := a.heartbeat
		if err != nil {
			failures++
			a.log.Warn().Err(err).Int("failures", failures).Msg("heartbeat to the resource manager failed")
			if failures >= 5 {
				a.fail(&cluster.AMExitError{Code: cluster.ExitReporterFailure, Reason: "Exception was thrown 5 time(s) from Reporter thread: " + err.Error()})
			}
		} else {
			failures = 0
			if a.pending() > 0 {
				interval = a.initialInterval
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(interval):
		}
	}
}

func (a *allocator) pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return max(0, a.target-len(a.running))
}

func (a *allocator) fail(err error) {
	a.failedOnce.Do(func() { a.failed <- err })
}

func (a *allocator) allocate(ctx context.Context) (bool, error) {
	a.mu.Lock()
	req := &messages.AmAllocate{AppId: a.appID, NumPending: int32(max(0, a.target-len(a.running))),
		Resource: a.resource.Proto(), Release: a.release, ExpectedResponseId: a.replies + 1}
	a.release = nil
	a.mu.Unlock()
	if a.progress != nil {
		total, done, running := a.progress()
		req.TasksTotal, req.TasksDone, req.TasksRunning = int32(total), int32(done), int32(running)
	}
	resp, err := actor.ResultAs[*messages.AmAllocateResponse](a.rm.AskWithTimeout(ctx, req, a.askTimeout))
	if err != nil {
		a.mu.Lock()
		a.release = append(req.Release, a.release...)
		a.mu.Unlock()
		return false, err
	}
	if resp.GetShutdown() {
		return true, nil
	}
	if id := resp.GetResponseId(); id > 0 {
		a.mu.Lock()
		a.replies = id
		a.mu.Unlock()
	}
	for _, st := range resp.GetCompleted() {
		a.completed(st)
	}
	for _, c := range resp.GetAllocated() {
		a.launch(ctx, c)
	}
	return false, nil
}

// launch starts an executor in container c, or gives c back when no more
// executors are wanted.
func (a *allocator) launch(ctx context.Context, c *messages.RmContainer) {
	a.mu.Lock()
	if len(a.running) >= a.target {
		a.release = append(a.release, c.GetContainerId())
		a.mu.Unlock()
		return
	}
	a.nextID++
	id := strconv.Itoa(a.nextID)
	a.running[c.GetContainerId()] = &executorContainer{executorID: id, container: c}
	a.byExecutor[id] = c.GetContainerId()
	a.numLaunched++
	a.mu.Unlock()
	cmd := []string{"sparkrpc", "executor",
		"--driver-url", a.driverURL,
		"--executor-id", id,
		"--hostname", c.GetNodeHost(),
		"--cores", strconv.Itoa(int(c.GetResource().GetCores())),
		"--app-id", a.appID,
		"--resourceProfileId", "0",
		"--properties-file", cluster.ExecutorConfFile}
	a.log.Info().Str("executor", id).Str("container", c.GetContainerId()).Str("node", c.GetNodeId()).
		Msgf("Launching executor %s in container %s on host %s with %d MB and %d cores", id, c.GetContainerId(), c.GetNodeHost(),
			c.GetResource().GetMemoryMb(), c.GetResource().GetCores())
	// The resource manager checks the container is this application's,
	// adds its secret, and asks the node manager, which takes container
	// starts from its resource manager only.
	f := a.rm.Ask(ctx, &messages.AmStartContainer{AppId: a.appID, ContainerId: c.GetContainerId(),
		LaunchContext: &messages.RmLaunchContext{Command: cmd, Files: map[string][]byte{cluster.ExecutorConfFile: a.execConf}}})
	a.starts.Add(1)
	go func() {
		defer a.starts.Done()
		if _, err := f.Result(); err != nil {
			if ctx.Err() != nil {
				return // the allocator stops: the application's containers end with it
			}
			a.log.Warn().Err(err).Str("container", c.GetContainerId()).Msg("cannot start the executor container")
			// The start may have failed on its way back, with the
			// executor running: give the container back, as Spark's
			// YarnAllocator releases one it could not launch in.
			a.mu.Lock()
			a.release = append(a.release, c.GetContainerId())
			a.mu.Unlock()
			a.completed(&messages.RmContainerStatus{ContainerId: c.GetContainerId(), ExitStatus: cluster.ContainerExitInvalid,
				Diagnostics: "Failed to launch container: " + err.Error()})
			return
		}
		a.log.Info().Str("executor", id).Str("container", c.GetContainerId()).Str("node", c.GetNodeId()).
			Msgf("Started executor %s in container %s", id, c.GetContainerId())
	}()
}

// completed handles a container that ended: it records the loss reason,
// counts the failure, tells the driver, and leaves the replacement to the
// next heartbeat.
func (a *allocator) completed(st *messages.RmContainerStatus) {
	a.mu.Lock()
	ec, ok := a.running[st.GetContainerId()]
	if !ok {
		a.mu.Unlock()
		return
	}
	delete(a.running, st.GetContainerId())
	delete(a.byExecutor, ec.executorID)
	status := st.GetExitStatus()
	byApp := !ec.killed && exitCausedByApp(status)
	msg := lossMessage(ec, st)
	a.reasons.Put(ec.executorID, lossReason{exitStatus: status, message: msg, causedByApp: byApp})
	if byApp {
		a.failures++
	}
	failures := a.failures
	waiting := a.waiting[ec.executorID]
	delete(a.waiting, ec.executorID)
	reason, _ := a.reasons.Get(ec.executorID)
	a.mu.Unlock()
	for _, fn := range waiting {
		fn(reason, true)
	}
	if byApp {
		a.log.Warn().Str("executor", ec.executorID).Int32("exitStatus", status).Msg(msg)
	} else {
		a.log.Info().Str("executor", ec.executorID).Int32("exitStatus", status).Msg(msg)
	}
	if a.onLost != nil {
		a.onLost(ec.executorID, msg)
	}
	if byApp && failures >= a.maxFailures {
		a.fail(&cluster.AMExitError{Code: cluster.ExitMaxExecutorFailures, Reason: fmt.Sprintf("Max number of executor failures (%d) reached", a.maxFailures)})
	}
}

// maxLossReasons bounds the loss reasons the allocator keeps: the driver
// asks for an executor's soon after losing it, so only the most recent
// are kept, the oldest forgotten first (an application master runs as
// long as its application, through any number of executors).
const maxLossReasons = 1000

func exitCausedByApp(status int32) bool {
	switch status {
	case 0, cluster.ContainerExitAborted, cluster.ContainerExitPreempted, cluster.ContainerExitKilledByAM, cluster.ContainerExitKilledByRM, cluster.ContainerExitAfterAppDone:
		return false
	}
	return true
}

func lossMessage(ec *executorContainer, st *messages.RmContainerStatus) string {
	status := st.GetExitStatus()
	var msg string
	switch {
	case status == 0:
		msg = fmt.Sprintf("Executor for container %s exited normally.", st.GetContainerId())
	case !exitCausedByApp(status) || ec.killed:
		msg = fmt.Sprintf("Container %s on host %s was killed or released by the cluster (exit status %d). It is not counted as a failure.",
			st.GetContainerId(), ec.container.GetNodeHost(), status)
	default:
		msg = fmt.Sprintf("Container marked as failed: %s on host: %s. Exit status: %d.", st.GetContainerId(), ec.container.GetNodeHost(), status)
	}
	if d := st.GetDiagnostics(); d != "" {
		msg += " Diagnostics: " + d
	}
	return msg
}

// requestTotal sets the number of executors wanted.
func (a *allocator) requestTotal(n int) {
	a.mu.Lock()
	a.target = max(0, n)
	a.mu.Unlock()
}

// kill releases the containers of the given executors: the resource
// manager has their node managers stop them (the whole process group,
// SIGTERM then SIGKILL). Without replace it lowers the target by as many;
// with replace the target stays, so that once a container has completed
// the next heartbeat asks for another (Spark's killAndReplaceExecutor). A
// killed container's exit is not counted as an executor failure.
func (a *allocator) kill(ids []string, replace bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		cid, ok := a.byExecutor[id]
		if !ok {
			a.log.Info().Str("executor", id).Msg("Executor to kill has no running container")
			continue
		}
		ec := a.running[cid]
		if ec.killed {
			continue // already released
		}
		ec.killed = true
		a.release = append(a.release, cid)
		if replace {
			a.log.Info().Str("executor", id).Str("container", cid).
				Msgf("Killing executor %s in container %s; another executor will replace it", id, cid)
			continue
		}
		a.target = max(0, a.target-1)
		a.log.Info().Str("executor", id).Str("container", cid).Msgf("Killing executor %s in container %s", id, cid)
	}
}

// lossReason calls fn with the loss reason of executor id: at once when its
// container has completed or is unknown, else when it completes.
func (a *allocator) lossReason(id string, fn func(lossReason, bool)) {
	a.mu.Lock()
	r, ok := a.reasons.Get(id)
	if ok {
		a.mu.Unlock()
		fn(r, true)
		return
	}
	if _, running := a.byExecutor[id]; !running {
		a.mu.Unlock()
		fn(lossReason{}, false)
		return
	}
	if a.waiting == nil {
		a.waiting = make(map[string][]func(lossReason, bool))
	}
	a.waiting[id] = append(a.waiting[id], fn)
	a.mu.Unlock()
}
