package resourcemanager

// This file holds the resource manager's endpoint: it hands the messages
// of clients, application masters and node managers to the core, and
// carries out the core's actions (container starts and stops, staging).

import (
	"fmt"
	"path/filepath"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// rmEndpoint is the resource manager's endpoint. Its Router holds one
// handler per message; a message of another type fails its asker with
// "Unsupported message". The endpoint is serial (one message at a time), so
// the core needs no lock.
type rmEndpoint struct {
	*actor.Router
	rm      *ResourceManager
	core    *rmCore
	staging *stagingArea
	log     zerolog.Logger
}

func newRMEndpoint(rm *ResourceManager, core *rmCore, staging *stagingArea) *rmEndpoint {
	e := &rmEndpoint{Router: actor.NewRouter(), rm: rm, core: core, staging: staging, log: rm.log}
	r := e.Router
	e.handleOwn(r)
	e.handleClients(r)
	e.handleAppMasters(r)
	e.handleNodes(r)
	e.handleStaging(r)
	return e
}

// handleOwn registers the endpoint's own messages: its ticks, the outcome
// of the container starts it asked for, and a driver's task progress.
func (e *rmEndpoint) handleOwn(r *actor.Router) {
	core := e.core
	actor.Handle(r, e.checkNodes)
	// The outcomes of container starts are asks of the endpoint to itself:
	// a one-way message carries no sender, and no other peer may report
	// them.
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmContainerStatus) (*messages.BoolReply, error) {
		if err := requireSelf(ctx, "a container's status"); err != nil {
			return nil, err
		}
		e.run(ctx.Context, core.containerCompleted(m))
		e.run(ctx.Context, core.schedule())
		return &messages.BoolReply{Value: true}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmContainerStarted) (*messages.BoolReply, error) {
		if err := requireSelf(ctx, "a container's start"); err != nil {
			return nil, err
		}
		for _, a := range core.apps {
			if a.amContainer != nil && a.amContainer.id == m.GetContainerId() {
				a.amLogDir = m.GetNodeId() + ":" + m.GetLogDir()
			}
		}
		return &messages.BoolReply{Value: true}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmTaskProgress) (*messages.BoolReply, error) {
		if err := e.requireClusterOrAppKey(ctx, m.GetAppId(), "task progress"); err != nil {
			return nil, err
		}
		core.taskProgress(m)
		return &messages.BoolReply{Value: true}, nil
	})
}

// handleClients registers the messages of clients (submit, apps, kill),
// which need the cluster's key.
func (e *rmEndpoint) handleClients(r *actor.Router) {
	core := e.core
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmNewApplication) (*messages.RmNewApplicationResponse, error) {
		if err := e.requireClusterKey(ctx, "a new application"); err != nil {
			return nil, err
		}
		id, maxRes, err := core.newApplication()
		if err != nil {
			e.log.Warn().Err(err).Str("user", m.GetUser()).Msg("new application refused")
			return nil, err
		}
		a := core.apps[id]
		a.creator, a.creatorIdentity = m.GetUser(), ctx.SenderIdentity()
		if a.creatorIdentity != "" {
			a.creatorAddress = ctx.SenderAddress().String()
		}
		e.log.Info().Str("app", id).Str("user", m.GetUser()).Msg("new application")
		return &messages.RmNewApplicationResponse{AppId: id, MaxResource: maxRes.Proto()}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmSubmitApplication) (*messages.RmSubmitApplicationResponse, error) {
		if _, err := e.requireCreator(ctx, m.GetAppId(), m.GetUser(), "submit it"); err != nil {
			e.log.Warn().Err(err).Str("app", m.GetAppId()).Msg("submission refused")
			return nil, err
		}
		acts, err := e.submit(m)
		if err != nil {
			e.log.Warn().Err(err).Str("app", m.GetAppId()).Msg("submission refused")
			return nil, err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("name", m.GetName()).Str("queue", m.GetQueue()).Msg("application accepted")
		e.run(ctx.Context, acts)
		return &messages.RmSubmitApplicationResponse{}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmGetApplicationReport) (*messages.RmApplicationReport, error) {
		if err := e.requireClusterOrAppKey(ctx, m.GetAppId(), "a report"); err != nil {
			return nil, err
		}
		return core.report(m.GetAppId())
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmKillApplication) (*messages.RmKillApplicationResponse, error) {
		if err := e.requireClusterOrAppKey(ctx, m.GetAppId(), "a kill"); err != nil {
			return nil, err
		}
		if a, err := core.app(m.GetAppId()); err == nil && !cluster.ACLAllows(a.acls, e.rm.cfg.AdminACLs, m.GetUser(), true) {
			e.log.Warn().Str("app", a.id).Str("user", m.GetUser()).Msg("kill refused by the application's ACLs")
			return nil, fmt.Errorf("%w: user %q may not kill application %s (owner %s; spark.modify.acls, spark.admin.acls)",
				cluster.ErrPermissionDenied, m.GetUser(), a.id, a.user)
		}
		killed, state, acts, err := core.kill(m.GetAppId(), m.GetDiagnostics())
		if err != nil {
			return nil, err
		}
		if killed {
			e.log.Info().Str("app", m.GetAppId()).Msg("application killed")
		}
		e.run(ctx.Context, acts)
		return &messages.RmKillApplicationResponse{Killed: killed, State: messages.RmAppState(state)}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, _ *messages.RmGetClusterNodes) (*messages.RmClusterNodes, error) {
		if err := e.requireClusterKey(ctx, "the list of nodes"); err != nil {
			return nil, err
		}
		return &messages.RmClusterNodes{Nodes: core.nodeReports()}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.RmGetApplications) (*messages.RmApplications, error) {
		if err := e.requireClusterKey(ctx, "the list of applications"); err != nil {
			return nil, err
		}
		return core.applications(m.GetStates()), nil
	})
}

// handleAppMasters registers the messages of application masters, each
// taken only with its own application's key.
func (e *rmEndpoint) handleAppMasters(r *actor.Router) {
	core := e.core
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.AmRegister) (*messages.AmRegisterResponse, error) {
		if err := e.requireAppKey(ctx, m.GetAppId(), "an application master's registration"); err != nil {
			return nil, err
		}
		resp, err := core.registerAM(m)
		if err != nil {
			return nil, err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("driver", m.GetDriverUrl()).Msg("application master registered")
		return resp, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.AmAllocate) (*messages.AmAllocateResponse, error) {
		if err := e.requireAppKey(ctx, m.GetAppId(), "an allocation"); err != nil {
			return nil, err
		}
		resp, acts, err := core.allocateFor(m)
		if err != nil {
			return nil, err
		}
		e.run(ctx.Context, acts)
		return resp, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.AmUnregister) (*messages.AmUnregisterResponse, error) {
		if err := e.requireAppKey(ctx, m.GetAppId(), "an application master's unregistration"); err != nil {
			return nil, err
		}
		acts, err := core.unregisterAM(m)
		if err != nil {
			return nil, err
		}
		e.log.Info().Str("app", m.GetAppId()).Str("finalStatus", cluster.FinalStatus(m.GetFinalStatus()).String()).Msg("application master unregistered")
		e.run(ctx.Context, acts)
		return &messages.AmUnregisterResponse{}, nil
	})
}

// handleNodes registers the messages of node managers, which need the
// cluster's key and come from the node they are about.
func (e *rmEndpoint) handleNodes(r *actor.Router) {
	core := e.core
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmRegister) (*messages.NmRegisterResponse, error) {
		if err := e.requireNode(ctx, m.GetNodeId(), "a node's registration"); err != nil {
			return nil, err
		}
		acts := core.registerNode(m)
		e.log.Info().Str("node", m.GetNodeId()).Int64("memoryMB", m.GetCapability().GetMemoryMb()).
			Int32("cores", m.GetCapability().GetCores()).Msg("node registered")
		e.run(ctx.Context, acts)
		return &messages.NmRegisterResponse{HeartbeatIntervalMs: 1000}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmHeartbeat) (*messages.NmHeartbeatResponse, error) {
		if err := e.requireNode(ctx, m.GetNodeId(), "a node's heartbeat"); err != nil {
			return nil, err
		}
		resp, acts := core.heartbeat(m)
		e.run(ctx.Context, acts)
		return resp, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmUnregister) (*messages.NmUnregisterResponse, error) {
		if err := e.requireNode(ctx, m.GetNodeId(), "a node's unregistration"); err != nil {
			return nil, err
		}
		acts, ok := core.unregisterNode(m.GetNodeId())
		if ok {
			e.log.Info().Str("node", m.GetNodeId()).Msg("node shut down: it unregistered")
		}
		e.run(ctx.Context, acts)
		return &messages.NmUnregisterResponse{}, nil
	})
}

// checkNodes, on the endpoint's tick, loses the nodes whose heartbeats
// stopped (each logged) and stops AM containers past their grace.
func (e *rmEndpoint) checkNodes(ctx *actor.Context, _ *messages.RmTick) error {
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
	failed, acts := e.core.checkAMs()
	for _, id := range failed {
		e.log.Warn().Str("app", id).Dur("expiry", e.rm.cfg.AMExpiry).Msg("application master silent past the expiry: its application failed")
	}
	e.run(ctx, acts)
	return nil
}

// submit checks that the resources the submission names were staged,
// stages the application's configuration, then submits it; the staging
// folder is removed again if the submission is refused.
func (e *rmEndpoint) submit(m *messages.RmSubmitApplication) ([]rmAction, error) {
	a, err := e.core.app(m.GetAppId())
	if err != nil {
		return nil, err
	}
	if a.state != cluster.StateNew {
		return nil, fmt.Errorf("%w: application %s is already %s", cluster.ErrInvalidState, a.id, a.state)
	}
	if e.rm.auth && len(m.GetAppSecret()) == 0 {
		e.removeStaging(a.id)
		return nil, fmt.Errorf("%w: application %s has no secret: with spark.authenticate on, the submitter generates one", cluster.ErrPermissionDenied, a.id)
	}
	if err := e.staging.check(a.id, m.GetAmLaunchContext().GetResources()); err != nil {
		e.removeStaging(a.id)
		return nil, err
	}
	dir := e.stagingDir(a.id)
	if err := privatefile.MkdirAll(dir); err != nil {
		e.removeStaging(a.id)
		return nil, fmt.Errorf("cluster: staging folder of %s: %w", a.id, err)
	}
	// Neither the staged conf nor the AM's holds a secret: the AM gets the
	// application's on a pipe (RmLaunchContext.secret) and presents its
	// application id as key id.
	staged := cluster.WithoutSecrets(m.GetConf())
	if err := privatefile.WriteFile(filepath.Join(dir, cluster.StagingConfFile), cluster.PropertiesText(staged)); err != nil {
		e.removeStaging(a.id)
		return nil, fmt.Errorf("cluster: staging folder of %s: %w", a.id, err)
	}
	conf := cluster.PropertiesText(staged)
	if len(m.GetAppSecret()) > 0 {
		conf = cluster.PropertiesText(cluster.ContainerAuthConf(staged, a.id))
	}
	lc := proto.Clone(m.GetAmLaunchContext()).(*messages.RmLaunchContext)
	if lc == nil {
		lc = &messages.RmLaunchContext{}
	}
	if lc.Files == nil {
		lc.Files = map[string][]byte{}
	}
	lc.Files[cluster.StagingConfFile] = conf
	lc.Secret = m.GetAppSecret()
	req := proto.Clone(m).(*messages.RmSubmitApplication)
	req.AmLaunchContext = lc
	req.Conf = nil
	acts, err := e.core.submit(req)
	if err != nil {
		e.removeStaging(a.id)
		return nil, err
	}
	a.staged = true
	if len(m.GetAppSecret()) > 0 {
		e.rm.keys.Set(a.id, m.GetAppSecret())
	}
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
		case actForgetSecret:
			e.rm.keys.Forget(a.appID)
		case actRemoveStaging:
			e.removeStaging(a.appID)
		case actStartContainer:
			nm := e.rm.env.RemoteRef(cluster.ParseNodeAddress(a.nodeAddress), cluster.NodeManagerEndpointName)
			start := a.start
			asks := e.rm.asks
			asks.ask(nm, start, func(f *actor.Future) {
				res, err := actor.ResultAs[*messages.NmStartContainerResponse](f)
				id := start.GetContainer().GetContainerId()
				if err != nil {
					e.log.Warn().Err(err).Str("container", id).Msg("cannot start container")
					self.Ask(asks.ctx, &messages.RmContainerStatus{ContainerId: id, State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE,
						ExitStatus: cluster.ContainerExitInvalid, Diagnostics: "Cannot start container: " + err.Error()})
					return
				}
				self.Ask(asks.ctx, &messages.RmContainerStarted{ContainerId: id, LogDir: res.GetLogDir(), NodeId: start.GetContainer().GetNodeId()})
			})
		case actStopContainer:
			nm := e.rm.env.RemoteRef(cluster.ParseNodeAddress(a.nodeAddress), cluster.NodeManagerEndpointName)
			id := a.stop.GetContainerId()
			e.rm.asks.ask(nm, a.stop, func(f *actor.Future) {
				if _, err := f.Result(); err != nil {
					e.log.Debug().Err(err).Str("container", id).Msg("cannot stop container")
				}
			})
		}
	}
}

// OnDisconnected kills the applications that the peer at addr created and
// has not submitted: only its connection may stage their resources, so
// they could never be submitted as staged, and a submitter that vanished
// (killed, its machine lost) cannot kill them; their staging folders go
// with them.
func (e *rmEndpoint) OnDisconnected(ctx *actor.Context, addr actor.RpcAddress) error {
	for _, id := range append([]string(nil), e.core.appOrder...) {
		a := e.core.apps[id]
		if a == nil || a.state != cluster.StateNew || a.creatorIdentity == "" || a.creatorAddress != addr.String() {
			continue
		}
		_, _, acts, err := e.core.kill(id, "Application killed: the client that created it disconnected before submitting it.")
		if err != nil {
			continue
		}
		e.log.Info().Str("app", id).Str("client", addr.String()).Msg("killed a new application: its creator disconnected before submitting it")
		e.run(ctx, acts)
	}
	return nil
}

// OnStop tells Shutdown that the endpoint has handled what was queued for
// it: no handler writes to the staging folder or starts a node ask after it.
func (e *rmEndpoint) OnStop(*actor.Context) error {
	close(e.rm.stopped)
	return nil
}

// ReceiveAndReply handles AmStartContainer, which it answers once the node
// manager has, and hands every other ask to the Router.
func (e *rmEndpoint) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	m, ok := msg.(*messages.AmStartContainer)
	if !ok {
		return e.Router.ReceiveAndReply(ctx, msg)
	}
	if err := e.requireAppKey(ctx, m.GetAppId(), "a container start"); err != nil {
		return err
	}
	act, err := e.core.startExecutor(m.GetAppId(), m.GetContainerId(), m.GetLaunchContext())
	if err != nil {
		return err
	}
	nm := e.rm.env.RemoteRef(cluster.ParseNodeAddress(act.nodeAddress), cluster.NodeManagerEndpointName)
	asks := e.rm.asks
	self := ctx.Self()
	asks.ask(nm, act.start, func(f *actor.Future) {
		res, err := actor.ResultAs[*messages.NmStartContainerResponse](f)
		if err != nil {
			// The container did not start, and its node manager does not
			// know it: it is complete, and its resources are free again
			// (the application master, told of the failure, has dropped
			// it already).
			self.Ask(asks.ctx, &messages.RmContainerStatus{ContainerId: m.GetContainerId(),
				State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: cluster.ContainerExitInvalid,
				Diagnostics: "Cannot start container: " + err.Error()})
			ctx.SendFailure(err)
			return
		}
		ctx.Reply(res)
	})
	return nil
}
