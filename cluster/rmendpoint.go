package cluster

// This file holds the resource manager's endpoint: it hands the messages
// of clients, application masters and node managers to the core, and
// carries out the core's actions (container starts and stops, staging).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

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
