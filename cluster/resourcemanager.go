package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// ResourceManagerEndpointName is the name of the resource manager's endpoint.
const ResourceManagerEndpointName = "ResourceManager"

// StagingConfFile is the name of the application's configuration file in
// its staging folder and in the AM container's working folder.
const StagingConfFile = "__spark_conf__.properties"

// ResourceManagerConfig configures a resource manager.
type ResourceManagerConfig struct {
	// Queues are the queues applications may be submitted to (default
	// just "default").
	Queues []string
	// StagingDir holds one staging folder per application, removed when the
	// application ends or its submission fails (default: a new folder under
	// the system's temporary folder, removed by Shutdown).
	StagingDir string
	// NodeExpiry is how long a node may miss heartbeats before it is lost
	// and its containers are reported failed (default 60s).
	NodeExpiry time.Duration
	// CheckInterval is how often nodes are checked (default NodeExpiry/4,
	// at most 1s).
	CheckInterval time.Duration
	// AMNodes are the ids ("host:port" of their env) of nodes reserved for
	// application masters: an AM container goes to one of them when it has
	// room (else to any node), an executor container never does. The
	// embedded local cluster reserves one, so that its W workers each run an
	// executor.
	AMNodes []string
	// Logger is the resource manager's logger (default: the env's).
	Logger *zerolog.Logger
	// Now returns the current time (default time.Now); for tests.
	Now func() time.Time
}

// ResourceManager is the cluster's resource manager (YARN's
// ResourceManager): it tracks nodes, accepts applications, launches their
// application masters and gives them containers.
type ResourceManager struct {
	cfg        ResourceManagerConfig
	env        *actor.Env
	ref        *actor.Ref
	log        zerolog.Logger
	ownStaging bool
	ts         int64
	stop       chan struct{}
	done       chan struct{}
	stopOnce   sync.Once
}

// StartResourceManager registers the resource manager's endpoint on env,
// which must listen for node managers and application masters on other
// envs to reach it.
func StartResourceManager(env *actor.Env, cfg ResourceManagerConfig) (*ResourceManager, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NodeExpiry <= 0 {
		cfg.NodeExpiry = 60 * time.Second
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = min(time.Second, cfg.NodeExpiry/4)
	}
	log := env.Logger()
	if cfg.Logger != nil {
		log = *cfg.Logger
	}
	rm := &ResourceManager{cfg: cfg, env: env, log: log.With().Str("component", "resourcemanager").Logger(),
		ts: cfg.Now().UnixMilli(), stop: make(chan struct{}), done: make(chan struct{})}
	if cfg.StagingDir == "" {
		d, err := os.MkdirTemp("", "sparkrpc-staging-")
		if err != nil {
			return nil, fmt.Errorf("cluster: resource manager staging folder: %w", err)
		}
		rm.cfg.StagingDir, rm.ownStaging = d, true
	} else if err := os.MkdirAll(cfg.StagingDir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: resource manager staging folder: %w", err)
	}
	core := newRMCore(rm.ts, cfg.Queues, cfg.Now)
	for _, id := range cfg.AMNodes {
		core.amNodes[id] = true
	}
	ep := &rmEndpoint{rm: rm, core: core, log: rm.log}
	ref, err := env.RegisterEndpoint(ResourceManagerEndpointName, ep)
	if err != nil {
		if rm.ownStaging {
			os.RemoveAll(rm.cfg.StagingDir)
		}
		return nil, err
	}
	rm.ref = ref
	go rm.ticker()
	rm.log.Info().Str("address", env.Address().String()).Str("staging", rm.cfg.StagingDir).Msg("resource manager started")
	return rm, nil
}

// Address returns the address node managers and clients use.
func (rm *ResourceManager) Address() actor.RpcAddress { return rm.env.Address() }

// ClusterTimestamp returns the start time (Unix ms) used in application ids.
func (rm *ResourceManager) ClusterTimestamp() int64 { return rm.ts }

// StagingDir returns the folder holding the applications' staging folders.
func (rm *ResourceManager) StagingDir() string { return rm.cfg.StagingDir }

func (rm *ResourceManager) ticker() {
	defer close(rm.done)
	t := time.NewTicker(rm.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-rm.stop:
			return
		case <-t.C:
			_ = rm.ref.Send(&messages.RmTick{Kind: "nodes"})
		}
	}
}

// Shutdown stops the resource manager's endpoint and removes the staging
// folder if the resource manager created it. It does not shut the env down.
func (rm *ResourceManager) Shutdown(ctx context.Context) error {
	rm.stopOnce.Do(func() {
		close(rm.stop)
		<-rm.done
		_ = rm.env.Stop(rm.ref)
		if rm.ownStaging {
			_ = os.RemoveAll(rm.cfg.StagingDir)
		}
	})
	return nil
}

type rmEndpoint struct {
	rm   *ResourceManager
	core *rmCore
	log  zerolog.Logger
}

func (e *rmEndpoint) Receive(ctx *actor.Context, msg proto.Message) error {
	switch m := msg.(type) {
	case *messages.RmTick:
		before := map[string]bool{}
		for id, n := range e.core.nodes {
			before[id] = n.lost
		}
		e.run(ctx, e.core.checkNodes(e.rm.cfg.NodeExpiry))
		for id, n := range e.core.nodes {
			if n.lost && !before[id] {
				e.log.Warn().Str("node", id).Msg("node lost: no heartbeat within the expiry; its containers are reported failed")
			}
		}
	case *messages.RmContainerStatus:
		e.run(ctx, e.core.containerCompleted(m))
		e.run(ctx, e.core.schedule())
	case *messages.RmTaskProgress:
		e.core.taskProgress(m)
	case *messages.RmContainerStarted:
		for _, a := range e.core.apps {
			if a.amContainer != nil && a.amContainer.id == m.GetContainerId() {
				a.amLogDir = m.GetNodeId() + ":" + m.GetLogDir()
			}
		}
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

func (e *rmEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	c := e.core
	switch m := msg.(type) {
	case *messages.RmNewApplication:
		id, maxRes := c.newApplication()
		e.log.Info().Str("app", id).Msg("new application")
		ctx.Reply(&messages.RmNewApplicationResponse{AppId: id, MaxResource: maxRes.proto()})
	case *messages.RmSubmitApplication:
		acts, err := e.submit(m)
		if err != nil {
			e.log.Warn().Err(err).Str("app", m.GetAppId()).Msg("submission refused")
			return err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("name", m.GetName()).Str("queue", m.GetQueue()).Msg("application accepted")
		e.run(ctx.Context, acts)
		ctx.Reply(&messages.RmSubmitApplicationResponse{})
	case *messages.RmGetApplicationReport:
		r, err := c.report(m.GetAppId())
		if err != nil {
			return err
		}
		ctx.Reply(r)
	case *messages.RmKillApplication:
		killed, state, acts, err := c.kill(m.GetAppId(), m.GetDiagnostics())
		if err != nil {
			return err
		}
		if killed {
			e.log.Info().Str("app", m.GetAppId()).Msg("application killed")
		}
		e.run(ctx.Context, acts)
		ctx.Reply(&messages.RmKillApplicationResponse{Killed: killed, State: messages.RmAppState(state)})
	case *messages.RmGetClusterNodes:
		ctx.Reply(&messages.RmClusterNodes{Nodes: c.nodeReports()})
	case *messages.RmGetApplications:
		ctx.Reply(c.applications(m.GetStates()))
	case *messages.AmRegister:
		resp, err := c.registerAM(m)
		if err != nil {
			return err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("driver", m.GetDriverUrl()).Msg("application master registered")
		ctx.Reply(resp)
	case *messages.AmAllocate:
		resp, acts, err := c.allocateFor(m)
		if err != nil {
			return err
		}
		e.run(ctx.Context, acts)
		ctx.Reply(resp)
	case *messages.AmUnregister:
		acts, err := c.unregisterAM(m)
		if err != nil {
			return err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("finalStatus", FinalStatus(m.GetFinalStatus()).String()).Msg("application master unregistered")
		e.run(ctx.Context, acts)
		ctx.Reply(&messages.AmUnregisterResponse{})
	case *messages.NmRegister:
		acts := c.registerNode(m)
		e.log.Info().Str("node", m.GetNodeId()).Int64("memoryMB", m.GetCapability().GetMemoryMb()).
			Int32("cores", m.GetCapability().GetCores()).Msg("node registered")
		e.run(ctx.Context, acts)
		ctx.Reply(&messages.NmRegisterResponse{HeartbeatIntervalMs: 1000})
	case *messages.NmHeartbeat:
		resp, acts := c.heartbeat(m)
		e.run(ctx.Context, acts)
		ctx.Reply(resp)
	default:
		return actor.ErrUnsupportedMessage
	}
	return nil
}

// submit stages the application's configuration, then submits it; the
// staging folder is removed again if the submission is refused.
func (e *rmEndpoint) submit(m *messages.RmSubmitApplication) ([]rmAction, error) {
	a, err := e.core.app(m.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state != StateNew {
		return nil, fmt.Errorf("%w: application %s is already %s", ErrInvalidState, a.id, a.state)
	}
	dir := e.stagingDir(a.id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: staging folder of %s: %w", a.id, err)
	}
	conf := propertiesText(m.GetConf())
	if err := os.WriteFile(filepath.Join(dir, StagingConfFile), conf, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: staging folder of %s: %w", a.id, err)
	}
	lc := proto.Clone(m.GetAmLaunchContext()).(*messages.RmLaunchContext)
	if lc == nil {
		lc = &messages.RmLaunchContext{}
	}
	if lc.Files == nil {
		lc.Files = map[string][]byte{}
	}
	lc.Files[StagingConfFile] = conf
	req := proto.Clone(m).(*messages.RmSubmitApplication)
	req.AmLaunchContext = lc
	acts, err := e.core.submit(req)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	a.staged = true
	return acts, nil
}

func (e *rmEndpoint) stagingDir(appID string) string {
	return filepath.Join(e.rm.cfg.StagingDir, appID)
}

// run carries out the core's actions. Container starts and stops are asks
// to node managers that complete asynchronously; their outcome comes back
// to this endpoint as a message.
func (e *rmEndpoint) run(ctx *actor.Context, acts []rmAction) {
	self := ctx.Self()
	for _, a := range acts {
		switch a.kind {
		case actRemoveStaging:
			if err := os.RemoveAll(e.stagingDir(a.appID)); err != nil {
				e.log.Warn().Err(err).Str("app", a.appID).Msg("cannot remove the staging folder")
			}
		case actStartContainer:
			nm := e.rm.env.RemoteRef(parseNodeAddress(a.nodeAddress), NodeManagerEndpointName)
			start := a.start
			f := nm.Ask(context.Background(), start)
			go func() {
				res, err := actor.ResultAs[*messages.NmStartContainerResponse](f)
				id := start.GetContainer().GetContainerId()
				if err != nil {
					e.log.Warn().Err(err).Str("container", id).Msg("cannot start container")
					_ = self.Send(&messages.RmContainerStatus{ContainerId: id, State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE,
						ExitStatus: containerExitInvalid, Diagnostics: "Cannot start container: " + err.Error()})
					return
				}
				_ = self.Send(&messages.RmContainerStarted{ContainerId: id, LogDir: res.GetLogDir(), NodeId: start.GetContainer().GetNodeId()})
			}()
		case actStopContainer:
			nm := e.rm.env.RemoteRef(parseNodeAddress(a.nodeAddress), NodeManagerEndpointName)
			f := nm.Ask(context.Background(), a.stop)
			id := a.stop.GetContainerId()
			go func() {
				if _, err := f.Result(); err != nil {
					e.log.Debug().Err(err).Str("container", id).Msg("cannot stop container")
				}
			}()
		}
	}
}

// parseNodeAddress parses a node manager's "host:port"; a malformed one
// gives an address that cannot be reached, so the ask to it fails.
func parseNodeAddress(s string) actor.RpcAddress {
	a, err := actor.ParseHostPort(s)
	if err != nil {
		return actor.RpcAddress{Host: s}
	}
	return a
}

// propertiesText renders conf as a properties file, keys sorted, that
// actor.Conf.LoadProperties reads back to the same pairs.
func propertiesText(conf map[string]string) []byte {
	var b bytes.Buffer
	_ = actor.StoreProperties(&b, conf) // a bytes.Buffer does not fail
	return b.Bytes()
}
