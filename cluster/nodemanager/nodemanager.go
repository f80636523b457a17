package nodemanager

// This file holds the node manager: its configuration, its registration
// with the resource manager, its heartbeats and its shutdown (its
// containers are in containers.go and process.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
)

// Config configures a node manager. ResourceManager, Capability
// and Dir are required (Start fails with ErrInvalidConfig
// without them); every other field's zero value means its default.
type Config struct {
	// ResourceManager is the address of the resource manager's env
	// (required).
	ResourceManager actor.RpcAddress
	// Capability is the memory and cores the node offers to containers
	// (required: both positive).
	Capability cluster.Resource
	// Dir is the node's local folder (required): container working folders
	// go under Dir/apps, logs under Dir/logs/<app id>/<container id>, the
	// applications' localized resources under
	// Dir/apps/<app id>/filecache. What the
	// node manager creates in it is private to its user (folders 0700,
	// files 0600); Dir itself is created 0700 when missing. A starting node manager removes the working
	// folders and localized resources that an earlier run's containers
	// left in Dir/apps (their processes died with it); logs stay.
	Dir string
	// EnvWhitelist names variables of the node manager's environment that
	// containers get too. By default a container gets only PATH, HOME,
	// USER, LOGNAME, TMPDIR, LANG, LC_ALL, TZ, SPARKRPC_LOG_LEVEL and
	// SPARKRPC_LOG_FORMAT of it, beside what its launch context sets (YARN's
	// yarn.nodemanager.env-whitelist).
	EnvWhitelist []string
	// PeerKeyID tells which key the live connection of a peer identity
	// authenticated with; it is (*netty.Transport).PeerKeyID of the env's
	// transport. Required when the env's conf turns spark.authenticate on:
	// container starts and stops are then accepted only from the resource
	// manager's identity authenticated with the cluster's key (without
	// spark.authenticate, from the resource manager's identity).
	PeerKeyID func(identity string) (keyID string, ok bool)
	// AdminACLs are users that may read every application's logs on this
	// node (spark.admin.acls; "*": everyone).
	AdminACLs []string
	// Executable replaces a command's first word "sparkrpc" (default
	// os.Executable()), unless the container has a localized program,
	// which does.
	Executable string
	// KillGrace is how long a stopped container gets between SIGTERM and
	// SIGKILL (zero or negative: 250ms, YARN's sleep-delay-before-sigkill).
	KillGrace time.Duration
	// HeartbeatInterval is how often the node heartbeats (zero or
	// negative: 1s).
	HeartbeatInterval time.Duration
	// RegisterTimeout bounds how long the node keeps trying to register
	// with the resource manager (zero or negative: 30s). Attempts are retried with
	// exponential backoff and jitter, each logged; Start returns
	// at once when its ctx ends.
	RegisterTimeout time.Duration
	// Launcher starts the containers' processes (default: child processes
	// of this one, each leading a process group of its own). The node
	// manager prepares a container's folders, files and environment
	// before it asks the Launcher, and watches and stops what it returns
	// in the same way whatever the Launcher.
	Launcher Launcher
	// WebUI is the base URL of the node manager's web UI (http://host:port),
	// which serves its containers' logs (ReadContainerLog): containers get
	// SPARK_LOG_URL_STDOUT and SPARK_LOG_URL_STDERR pointing there (see
	// ContainerLogURL). Empty: the node runs no web UI, and containers get
	// no log URLs (not file:// paths, which no browser elsewhere can open).
	WebUI string
	// Logger is the node manager's logger (default: the env's).
	Logger *zerolog.Logger
}

// validate checks the required fields; the defaults are filled in by
// Start.
func (cfg *Config) validate() error {
	switch {
	case cfg.ResourceManager.IsZero():
		return cluster.ConfigError("nodemanager.Config", "ResourceManager", "is required (the resource manager's host:port)")
	case cfg.Capability.MemoryMB <= 0 || cfg.Capability.Cores <= 0:
		return cluster.ConfigError("nodemanager.Config", "Capability", "must have positive memory and cores, not %d MB and %d cores",
			cfg.Capability.MemoryMB, cfg.Capability.Cores)
	case cfg.Dir == "":
		return cluster.ConfigError("nodemanager.Config", "Dir", "is required (the node's local folder)")
	}
	return nil
}

// NodeManager runs containers for the resource manager and application
// masters as child processes (YARN's NodeManager).
type NodeManager struct {
	cfg    Config
	env    *actor.Env
	rm     *actor.Ref
	nodeID string
	log    zerolog.Logger
	// registered says Start registered the node (set before Start
	// returns): only then does Shutdown unregister it.
	registered bool
	// timeouts are those of the asks to the resource manager, each from
	// the key its timeout error names.
	timeouts rmTimeouts

	// loc holds the localized resources; chunk is the size of the chunks
	// it reads them in.
	loc   *localizer
	chunk int

	mu         sync.Mutex
	containers map[string]*containerProc
	localizing map[string]*localizing         // containers without a process yet
	acls       map[string]*messages.RmAppAcls // by application id, from launch contexts
	completed  []*messages.RmContainerStatus
	closed     bool
	starting   sync.WaitGroup // container starts in flight
	watchers   sync.WaitGroup

	kick     chan struct{}
	stop     chan struct{}
	loopDone chan struct{}
	stopOnce sync.Once
	// stopCtx ends when Shutdown starts: it bounds a registration that
	// runs in the heartbeat loop.
	stopCtx    context.Context
	cancelStop context.CancelFunc
	// loopCtx ends when Shutdown, its containers stopped, ends the loop:
	// it bounds the loop's heartbeats, which go on while the containers
	// take their grace period.
	loopCtx    context.Context
	cancelLoop context.CancelFunc
}

// Start registers a node manager endpoint on env (which must
// listen), registers the node with the resource manager and starts
// heartbeating. Stop it with Shutdown, which stops every container.
func Start(ctx context.Context, env *actor.Env, cfg Config) (*NodeManager, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("cluster: node manager: %w", err)
		}
		cfg.Executable = exe
	}
	if cfg.Launcher == nil {
		cfg.Launcher = processLauncher{}
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 250 * time.Millisecond
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = time.Second
	}
	if cfg.RegisterTimeout <= 0 {
		cfg.RegisterTimeout = 30 * time.Second
	}
	if env.Address().IsZero() {
		return nil, errors.New("cluster: a node manager's env must listen")
	}
	if cluster.AuthOn(env.Conf()) && cfg.PeerKeyID == nil {
		return nil, cluster.ConfigError("nodemanager.Config", "PeerKeyID", "is required with spark.authenticate on (the env's transport's PeerKeyID)")
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = abs
	if err := prepareNodeDir(cfg.Dir); err != nil {
		return nil, fmt.Errorf("cluster: node manager: %w", err)
	}
	maxSize, err := env.Conf().MaxMessageSize()
	if err != nil {
		return nil, err
	}
	timeouts, err := readRMTimeouts(env.Conf())
	if err != nil {
		return nil, err
	}
	log := env.Logger()
	if cfg.Logger != nil {
		log = *cfg.Logger
	}
	nm := &NodeManager{cfg: cfg, env: env, nodeID: env.Address().HostPort(), chunk: cluster.StageChunkSize(maxSize),
		log:        log.With().Str("component", "nodemanager").Str("node", env.Address().HostPort()).Logger(),
		containers: make(map[string]*containerProc), acls: make(map[string]*messages.RmAppAcls), kick: make(chan struct{}, 1),
		stop: make(chan struct{}), loopDone: make(chan struct{}),
		timeouts: timeouts}
	nm.stopCtx, nm.cancelStop = context.WithCancel(context.Background())
	nm.loopCtx, nm.cancelLoop = context.WithCancel(context.Background())
	nm.rm = env.RemoteRef(cfg.ResourceManager, cluster.ResourceManagerEndpointName)
	nm.localizing = make(map[string]*localizing)
	nm.loc = newLocalizer(nm.stopCtx, filepath.Join(cfg.Dir, "apps"), nm.fetchResource, nm.log)
	if _, err := env.RegisterEndpoint(cluster.NodeManagerEndpointName, newNMEndpoint(nm)); err != nil {
		return nil, err
	}
	if err := env.Metrics().Register(nmCollector{nm}); err != nil {
		nm.log.Warn().Err(err).Msg("node manager metrics not registered")
	}
	if err := nm.register(ctx); err != nil {
		close(nm.loopDone) // the loop never started: Shutdown must not wait for it
		nm.Shutdown(context.Background())
		return nil, err
	}
	nm.registered = true
	go nm.loop()
	return nm, nil
}

// prepareNodeDir creates the node's folder (0700) if it is missing, makes
// its logs folder and files private, and removes the working folders of containers that are
// no longer running: a new node manager runs none yet.
func prepareNodeDir(dir string) error {
	// A folder that exists keeps its mode (it may be shared); what the node
	// manager creates in it is private.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := privatefile.RemoveAll(filepath.Join(dir, "apps")); err != nil {
		return err
	}
	logs := filepath.Join(dir, "logs")
	if _, err := os.Stat(logs); err == nil {
		return filepath.WalkDir(logs, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case d.IsDir():
				return os.Chmod(path, 0o700)
			case d.Type().IsRegular():
				return os.Chmod(path, 0o600)
			}
			return nil
		})
	}
	return nil
}

// NodeID returns the node's id ("host:port" of its env).
func (nm *NodeManager) NodeID() string { return nm.nodeID }

// Dir returns the node's local folder.
func (nm *NodeManager) Dir() string { return nm.cfg.Dir }

// register registers the node with the resource manager, retrying with
// exponential backoff and jitter (registerBackOff) until it succeeds,
// RegisterTimeout passes or ctx ends. Each failed attempt is logged once.
func (nm *NodeManager) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeoutCause(ctx, nm.cfg.RegisterTimeout, errRegisterTimeout)
	defer cancel()
	req := &messages.NmRegister{NodeId: nm.nodeID, Address: nm.env.Address().HostPort(), Host: nm.env.Address().Host,
		Capability: nm.cfg.Capability.Proto()}
	t := nm.timeouts.register
	rm := nm.cfg.ResourceManager.HostPort()
	attempt, last := 0, error(nil)
	_, err := backoff.Retry(ctx, func() (*messages.NmRegisterResponse, error) {
		attempt++
		resp, err := actor.ResultAs[*messages.NmRegisterResponse](nm.rm.AskWithTimeout(ctx, req, t))
		if ctx.Err() == nil || last == nil {
			// An attempt that the end of ctx cut says nothing of the
			// resource manager: the error of the one before does.
			last = err
		}
		return resp, err
	}, backoff.WithBackOff(registerBackOff()), backoff.WithMaxElapsedTime(0), // RegisterTimeout bounds ctx
		backoff.WithNotify(func(err error, wait time.Duration) {
			nm.log.Warn().Str("rm", rm).Int("attempt", attempt).Str("retryIn", wait.Round(time.Millisecond).String()).
				Str("error", err.Error()).Msg("cannot register with the resource manager; retrying")
		}))
	if err == nil {
		nm.log.Info().Str("rm", rm).Int64("memoryMB", nm.cfg.Capability.MemoryMB).
			Int("cores", nm.cfg.Capability.Cores).Int("attempt", attempt).Msg("registered with the resource manager")
		return nil
	}
	if errors.Is(err, errRegisterTimeout) {
		if errors.Is(last, netty.ErrAuthFailed) {
			// It answered, and refused this node's secret at every attempt.
			return fmt.Errorf("%w: the resource manager at %s refused this node's authentication for %s (%d attempts; "+
				"check %s and %s on both sides; last error: %w)", cluster.ErrRegistrationFailed, rm, nm.cfg.RegisterTimeout,
				attempt, netty.KeyAuthenticate, netty.KeyAuthenticateSecret, last)
		}
		if last != nil {
			return fmt.Errorf("%w: the resource manager at %s did not answer within %s (%d attempts; last error: %w)",
				cluster.ErrRegistrationFailed, rm, nm.cfg.RegisterTimeout, attempt, last)
		}
		return fmt.Errorf("%w: the resource manager at %s did not answer within %s (%d attempts)",
			cluster.ErrRegistrationFailed, rm, nm.cfg.RegisterTimeout, attempt)
	}
	if cause := context.Cause(ctx); cause != nil {
		return fmt.Errorf("%w with the resource manager at %s: %w", cluster.ErrRegistrationFailed, rm, cause)
	}
	return fmt.Errorf("%w with the resource manager at %s: %w", cluster.ErrRegistrationFailed, rm, err)
}

// errRegisterTimeout is the cause of a registration's ctx when
// RegisterTimeout passes.
var errRegisterTimeout = errors.New("register timeout")

// registerBackOff returns the waits between a node manager's registration
// attempts: from 200ms, doubling up to 10s, each randomised by ±20% so that
// node managers that retry together spread out.
func registerBackOff() *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{InitialInterval: 200 * time.Millisecond, RandomizationFactor: 0.2,
		Multiplier: 2, MaxInterval: 10 * time.Second}
}

func (nm *NodeManager) loop() {
	defer close(nm.loopDone)
	t := time.NewTicker(nm.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-nm.stop:
			return
		case <-t.C:
		case <-nm.kick:
		}
		nm.heartbeat(nm.loopCtx)
	}
}

// unregister tells the resource manager that the node is shutting down
// (NmUnregister, after the heartbeat that reported its containers' end),
// so that it reports the node SHUTDOWN at once rather than LOST at its
// expiry. A resource manager that does not answer in time loses the node
// at the expiry instead.
func (nm *NodeManager) unregister(ctx context.Context) {
	uctx, cancel := context.WithTimeout(ctx, nm.timeouts.unregister.Duration)
	defer cancel()
	_, err := actor.ResultAs[*messages.NmUnregisterResponse](nm.rm.AskWithTimeout(uctx, &messages.NmUnregister{NodeId: nm.nodeID},
		nm.timeouts.unregister))
	if err != nil {
		nm.log.Warn().Err(err).Msg("cannot unregister from the resource manager: it will lose the node at its expiry")
	}
}

// heartbeat reports the node's containers to the resource manager and acts
// on its answer. The loop's heartbeats end with nm.loopCtx, so that
// Shutdown does not wait behind one the resource manager leaves
// unanswered; Shutdown's own last one ends with Shutdown's ctx.
func (nm *NodeManager) heartbeat(ctx context.Context) {
	nm.mu.Lock()
	completed := nm.completed
	nm.completed = nil
	// A container that localizes is running for the resource manager: a
	// kill of its application reaches it before it starts.
	running := make([]string, 0, len(nm.containers)+len(nm.localizing))
	for id := range nm.containers {
		running = append(running, id)
	}
	for id := range nm.localizing {
		running = append(running, id)
	}
	nm.mu.Unlock()
	sort.Strings(running)
	ctx, cancel := context.WithTimeout(ctx, nm.timeouts.heartbeat.Duration)
	defer cancel()
	resp, err := actor.ResultAs[*messages.NmHeartbeatResponse](nm.rm.AskWithTimeout(ctx,
		&messages.NmHeartbeat{NodeId: nm.nodeID, Completed: completed, Running: running, CachedApps: nm.loc.cachedApps()},
		nm.timeouts.heartbeat))
	if err != nil {
		nm.log.Warn().Err(err).Msg("heartbeat to the resource manager failed")
		nm.mu.Lock()
		nm.completed = append(completed, nm.completed...)
		nm.mu.Unlock()
		return
	}
	if resp.GetResync() {
		nm.log.Warn().Msg("the resource manager does not know this node; registering again")
		if err := nm.register(nm.stopCtx); err != nil {
			nm.log.Error().Err(err).Msg("registration failed")
		}
		return
	}
	for _, id := range resp.GetKill() {
		nm.stopContainer(id, cluster.ContainerExitKilledByRM, "Container killed by the ResourceManager")
	}
	for _, id := range resp.GetFinishedApps() {
		nm.loc.finish(id)
	}
}

// statusesQueued reports whether completed containers wait to be reported.
func (nm *NodeManager) statusesQueued() bool {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return len(nm.completed) > 0
}

func (nm *NodeManager) kickHeartbeat() {
	select {
	case nm.kick <- struct{}{}:
	default:
	}
}

// Shutdown stops every container (SIGTERM, then SIGKILL after the grace
// period), waits for them, reports them to the resource manager once,
// stops heartbeating and, for a node Start registered, unregisters it
// (NmUnregister). It does not shut the env down. If ctx ends before all
// of that is done, Shutdown kills the containers still running and
// returns ctx's error.
func (nm *NodeManager) Shutdown(ctx context.Context) error {
	nm.mu.Lock()
	nm.closed = true
	localizing := len(nm.localizing) > 0 // they complete with statuses to report
	nm.mu.Unlock()
	nm.cancelStop()
	// A start in flight sees closed and stops its container itself; one
	// that localizes sees its ctx end and completes its container.
	nm.starting.Wait()
	nm.loc.wait()
	nm.mu.Lock()
	procs := make([]*containerProc, 0, len(nm.containers))
	for _, p := range nm.containers {
		procs = append(procs, p)
	}
	nm.mu.Unlock()
	for _, p := range procs {
		p.stop(nm.cfg.KillGrace, cluster.ContainerExitKilledByRM, "Container killed: node manager shutting down")
	}
	var err error
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			_ = p.proc.Signal(syscall.SIGKILL)
			err = ctx.Err()
		}
	}
	started := false
	nm.stopOnce.Do(func() { started = true; close(nm.stop) })
	nm.cancelLoop()
	if started {
		select {
		case <-nm.loopDone:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if len(procs) > 0 || localizing {
			// Wait for the watchers to queue the final statuses.
			watched := make(chan struct{})
			go func() { nm.watchers.Wait(); close(watched) }()
			select {
			case <-watched:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		// Report what is queued: those statuses, and any that a failed
		// heartbeat (or the loop's, ended by cancelLoop) put back.
		if nm.statusesQueued() {
			nm.heartbeat(ctx)
		}
		if nm.registered {
			nm.unregister(ctx)
		}
	}
	if ep, ok := nm.env.Endpoint(cluster.NodeManagerEndpointName); ok {
		_ = nm.env.Stop(ep)
	}
	nm.env.Metrics().Unregister(nmCollector{nm})
	return err
}
