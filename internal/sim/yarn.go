// The YARN-shaped cluster of the seeds that run one: the production
// resource manager, a node manager per host and one for the application
// master, the application submitted in client mode, and its application
// master's allocator keeping the executors at their target.

package sim

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The cluster's addresses: the resource manager, the node managers' port,
// and the host of the node reserved for the application master, which no
// fault takes (an application master's restart, a second attempt, is not
// simulated).
const (
	rmHost, rmPort = "rm", 8032
	nmPort         = 8042
	amHost         = "am-host"
)

// yarnCluster is a seed's cluster. The driver is the simulator's, as a
// client-mode driver runs in the submitting process; the simulator plays
// the submitting client (yarn's clientBackend: submit, wait for the
// application master, tell it when the driver has finished) and the
// programs of the containers (containers.go). Everything else is the
// production code: resourcemanager, nodemanager, appmaster (the
// ExecutorLauncher, its allocator and endpoint) and the driver's
// appmaster.SchedulerBackend.
type yarnCluster struct {
	a   *app
	w   *World
	cfg *yarnConfig

	root   string // the nodes' and the staging folders, removed at the end
	rmEnv  *actor.Env
	rm     *resourcemanager.ResourceManager
	sched  *appmaster.SchedulerBackend
	ctx    context.Context // the backend's and the client's; ends at teardown
	cancel context.CancelFunc
	// watchCtx ends the client's watch of the application when the driver
	// has finished; upDone is closed when the client's goroutine returns.
	watchCtx  context.Context
	stopWatch context.CancelFunc
	upDone    chan struct{}
	amPorts   int // the application master's envs' ports so far

	mu      sync.Mutex
	nodes   map[string]*nodeManager // by host: the node managers that run
	client  *rmclient.Client
	handle  *rmclient.AppHandle
	amRef   *actor.Ref
	amProc  *process // the application master's container, once started
	amEnv   *actor.Env
	amExit  error // what appmaster.Run returned
	amEnded bool
	pids    int
	stopped bool // the node managers are stopping: one that starts now stops at once

	model allocModel // the allocator's failures as the simulator counts them
}

// nodeManager is one host's node manager and its env.
type nodeManager struct {
	host   string
	env    *actor.Env
	node   *node
	nm     *nodemanager.NodeManager // nil until it has registered
	closed chan struct{}            // closed when a lost one is gone
}

func newYarnCluster(a *app) *yarnCluster {
	y := &yarnCluster{a: a, w: a.w, cfg: a.w.cfg.yarn, nodes: make(map[string]*nodeManager), upDone: make(chan struct{})}
	y.ctx, y.cancel = context.WithCancel(context.Background())
	y.watchCtx, y.stopWatch = context.WithCancel(y.ctx)
	y.sched = appmaster.NewSchedulerBackend(y.ctx, nil, zerolog.Nop())
	y.model = newAllocModel(y.cfg.maxFailures)
	return y
}

func (y *yarnCluster) rmAddress() actor.RpcAddress { return actor.NewRpcAddress(rmHost, rmPort) }

// start starts the resource manager, then, on a goroutine, the node
// managers and the application's submission.
func (y *yarnCluster) start() error {
	w := y.w
	root, err := os.MkdirTemp("", "sparkrpc-sim-")
	if err != nil {
		return err
	}
	y.root = root
	w.trace.dir = root
	w.cleanup = append(w.cleanup, func() { os.RemoveAll(root) })
	rn := w.net.transport(rmHost, rmPort)
	env, err := actor.NewEnv("sparkRM", w.cfg.conf(), actor.WithTransport(rn), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		return err
	}
	y.rmEnv = env
	nop := zerolog.Nop()
	y.rm, err = resourcemanager.Start(env, resourcemanager.Config{StagingDir: filepath.Join(root, "staging"),
		NodeExpiry: y.cfg.nodeExpiry, CheckInterval: y.cfg.checkEvery, AMNodes: []string{amHost + ":" + strconv.Itoa(nmPort)},
		Logger: &nop})
	if err != nil {
		return err
	}
	w.trace.add("resource manager started; %d worker nodes with room for %d executors each", w.cfg.hosts, y.cfg.slots)
	hosts := []string{amHost}
	for i := range w.cfg.hosts {
		hosts = append(hosts, "host-"+strconv.Itoa(i))
	}
	y.a.wg.Add(1)
	go func() {
		defer y.a.wg.Done()
		defer close(y.upDone)
		for _, h := range hosts {
			if err := y.startNode(h); err != nil {
				w.fail("the node manager of %s did not start: %v", h, err)
				return
			}
		}
		y.submitAndWatch()
	}()
	return nil
}

// startNode starts host's node manager and waits until it registered.
func (y *yarnCluster) startNode(host string) error {
	w := y.w
	res := w.cfg.nodeResource()
	if host == amHost {
		res = cluster.Resource{MemoryMB: amMemoryMB, Cores: 1}
	}
	nd := w.net.transport(host, nmPort)
	env, err := actor.NewEnv("sparkNM", w.cfg.conf(), actor.WithTransport(nd), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		return err
	}
	n := &nodeManager{host: host, env: env, node: nd, closed: make(chan struct{})}
	y.mu.Lock()
	y.nodes[host] = n
	y.mu.Unlock()
	nop := zerolog.Nop()
	nm, err := nodemanager.Start(y.ctx, env, nodemanager.Config{ResourceManager: y.rmAddress(), Capability: res,
		Dir: filepath.Join(y.root, host), HeartbeatInterval: y.cfg.nmHeartbeat, Launcher: &launcher{y: y, host: host},
		Executable: "sparkrpc", Logger: &nop})
	if err != nil {
		_ = env.Close()
		return err
	}
	y.mu.Lock()
	n.nm = nm
	stopped := y.stopped
	y.mu.Unlock()
	w.trace.note("node manager of %s registered", host)
	if stopped { // it came back after the application's end
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = nm.Shutdown(ctx)
	}
	return nil
}

// submitAndWatch submits the application in client mode, gives the
// driver its application master once it has registered, and watches the
// application until the driver has finished: if the cluster ends it
// first, its jobs fail (yarn's clientBackend).
func (y *yarnCluster) submitAndWatch() {
	w := y.w
	client := rmclient.New(y.a.driverEnv, y.rmAddress()).AsUser("sim")
	sub := rmclient.Submission{Name: "sim", AMResource: cluster.Resource{MemoryMB: amMemoryMB, Cores: 1},
		ExecutorResource: cluster.Resource{MemoryMB: execMemoryMB, Cores: w.cfg.cores},
		AMCommand: []string{"sparkrpc", "applicationmaster", "--client-mode", "--driver-url", y.a.driver.URL(),
			"--rm", y.rmAddress().HostPort()},
		Conf: w.cfg.appConf().All(), UnmanagedDriver: true, ReportInterval: y.cfg.reportEvery}
	h, err := client.Submit(y.ctx, sub)
	if err != nil {
		if y.ctx.Err() == nil {
			w.fail("%s: the submission failed: %v", invYarnAccepted, err)
		}
		return
	}
	y.mu.Lock()
	y.client, y.handle = client, h
	y.mu.Unlock()
	w.trace.note("submitted application %s", h.AppID())
	r, err := h.WaitFor(y.watchCtx, func(r *rmclient.AppReport) bool { return r.State == cluster.StateRunning })
	if err != nil {
		return
	}
	if r.State == cluster.StateRunning && r.AM != nil {
		if ref, err := y.a.driverEnv.RefFromProto(r.AM); err == nil {
			y.mu.Lock()
			y.amRef = ref
			y.mu.Unlock()
			y.sched.SetAM(ref)
		}
	}
	if !r.State.Terminal() {
		r, err = h.WaitFor(y.watchCtx, func(*rmclient.AppReport) bool { return false })
	}
	if err == nil && r != nil && r.State.Terminal() {
		end := r.ExitedError()
		w.request("application ended", func() { y.a.appFailed(end) })
	}
}

// finish runs once the driver has stopped: it stops the watch, tells the
// application master that the driver finished (or, failing that, kills
// the application), waits until the resource manager has ended the
// application and the application master has exited, checks that no
// container outlives it, and stops the node managers.
func (y *yarnCluster) finish(ctx context.Context) {
	y.stopWatch()
	<-y.upDone
	y.mu.Lock()
	amRef, client, h := y.amRef, y.client, y.handle
	y.mu.Unlock()
	if h == nil {
		y.stopNodes(ctx)
		return
	}
	final := messages.RmFinalStatus(cluster.FinalSucceeded)
	told := false
	if amRef != nil {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := amRef.AskSync(fctx, &messages.AmDriverFinished{FinalStatus: final})
		cancel()
		told = err == nil
	}
	if !told {
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, _ = client.Kill(kctx, h.AppID(), "Application killed: the driver ended before its application master could be told.")
		cancel()
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, _ = h.WaitFor(wctx, func(r *rmclient.AppReport) bool { return r.State.Terminal() })
	cancel()
	y.mu.Lock()
	am := y.amProc
	y.mu.Unlock()
	if am != nil {
		select {
		case <-am.done:
		case <-ctx.Done():
		}
	}
	y.checkNoContainers(ctx, client)
	y.stopNodes(ctx)
}

// stopNodes shuts the node managers down, in the order of their hosts.
func (y *yarnCluster) stopNodes(ctx context.Context) {
	y.mu.Lock()
	y.stopped = true
	nodes := make([]*nodeManager, 0, len(y.nodes))
	for _, h := range slices.Sorted(maps.Keys(y.nodes)) {
		nodes = append(nodes, y.nodes[h])
	}
	y.mu.Unlock()
	for _, n := range nodes {
		if n.nm != nil {
			_ = n.nm.Shutdown(ctx)
		}
	}
}

// shutdown stops the resource manager and the cluster's envs, once every
// container has exited.
func (y *yarnCluster) shutdown(ctx context.Context) {
	_ = y.rm.Shutdown(ctx)
	y.mu.Lock()
	nodes := slices.Collect(maps.Values(y.nodes))
	y.mu.Unlock()
	for _, n := range nodes {
		_ = n.env.Shutdown(ctx)
	}
	_ = y.rmEnv.Shutdown(ctx)
	y.cancel()
}

// teardown ends what still runs after a failure.
func (y *yarnCluster) teardown() {
	y.cancel()
	y.mu.Lock()
	nodes := slices.Collect(maps.Values(y.nodes))
	am, amEnv := y.amProc, y.amEnv
	y.mu.Unlock()
	if am != nil {
		am.signal(sigKill)
	}
	if amEnv != nil {
		_ = amEnv.Close()
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range nodes {
			if n.nm != nil {
				_ = n.nm.Shutdown(ctx)
			}
			_ = n.env.Close()
		}
		if y.rm != nil {
			_ = y.rm.Shutdown(ctx)
		}
		if y.rmEnv != nil {
			_ = y.rmEnv.Close()
		}
	}()
}

// loseNode is the loss of a worker host (the node-loss fault): its
// executors die, and its node manager with them, so that the resource
// manager sees the node only through its missing heartbeats. A new node
// manager starts on the host after a while.
func (y *yarnCluster) loseNode(host string) {
	w := y.w
	y.mu.Lock()
	n := y.nodes[host]
	if n == nil || n.nm == nil {
		y.mu.Unlock()
		return
	}
	delete(y.nodes, host)
	y.mu.Unlock()
	w.killNodes(n.node)
	// One process a step: the executors, then the node manager's
	// goroutines, which would race each other's stops in one step.
	d := time.Duration(0)
	for _, ex := range y.a.onHost(host) {
		d += w.jitter(time.Microsecond, 50*time.Microsecond)
		w.at(d, "", func() { w.kill(ex) })
	}
	d += w.jitter(time.Microsecond, 50*time.Microsecond)
	w.at(d, "", func() {
		y.a.wg.Add(1)
		go func() {
			defer y.a.wg.Done()
			// The env first: its address is free for the node's next
			// manager, while this one's goroutines wind down.
			_ = n.env.Close()
			close(n.closed)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = n.nm.Shutdown(ctx)
		}()
	})
	w.at(y.cfg.nodeRestart, "node manager of "+host+" starts again", func() {
		if y.a.isStopping() {
			return
		}
		y.a.wg.Add(1)
		go func() {
			defer y.a.wg.Done()
			<-n.closed
			if err := y.startNode(host); err != nil && y.ctx.Err() == nil && !y.a.isStopping() {
				w.fail("the node manager of %s did not start again: %v", host, err)
			}
		}()
	})
}

func (a *app) isStopping() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopping
}
