package nodemanager

// This file holds the node manager's containers: its endpoint (YARN's
// ContainerManager) and how it starts, watches and stops them.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

func (nm *NodeManager) startContainer(req *messages.NmStartContainer) (*messages.NmStartContainerResponse, error) {
	c := req.GetContainer()
	id := c.GetContainerId()
	// The ids become path parts: only ids of the resource manager's form.
	if err := cluster.ValidateAppID(req.GetAppId()); err != nil {
		return nil, err
	}
	if err := cluster.ValidateContainerID(id); err != nil {
		return nil, err
	}
	nm.mu.Lock()
	if nm.closed {
		nm.mu.Unlock()
		return nil, errors.New("cluster: node manager is shutting down")
	}
	if _, dup := nm.containers[id]; dup {
		nm.mu.Unlock()
		return nil, fmt.Errorf("cluster: container %s is already running", id)
	}
	nm.starting.Add(1)
	defer nm.starting.Done()
	if acls := req.GetLaunchContext().GetAcls(); acls != nil {
		nm.acls[req.GetAppId()] = acls
	}
	nm.mu.Unlock()
	spec := containerSpec{id: id, appID: req.GetAppId(), command: req.GetLaunchContext().GetCommand(),
		env: req.GetLaunchContext().GetEnvironment(), files: req.GetLaunchContext().GetFiles(),
		memoryMB: c.GetResource().GetMemoryMb(), cores: int(c.GetResource().GetCores()), nodeHost: nm.env.Address().Host,
		secret: req.GetLaunchContext().GetSecret(), passEnv: nm.cfg.EnvWhitelist}
	workDir := filepath.Join(nm.cfg.Dir, "apps", spec.appID, id)
	logDir := filepath.Join(nm.cfg.Dir, "logs", spec.appID, id)
	if err := nm.keepACLs(spec.appID, req.GetLaunchContext().GetAcls()); err != nil {
		return nil, fmt.Errorf("cluster: container %s: %w", id, err)
	}
	p, err := launchContainer(spec, nm.cfg.Executable, workDir, logDir)
	if err != nil {
		return nil, err
	}
	nm.mu.Lock()
	if nm.closed {
		nm.mu.Unlock()
		p.stop(nm.cfg.KillGrace, cluster.ContainerExitKilledByRM, "node manager shutting down")
		<-p.done
		return nil, errors.New("cluster: node manager is shutting down")
	}
	p.memoryMB, p.cores, p.started = spec.memoryMB, spec.cores, time.Now()
	nm.containers[id] = p
	nm.watchers.Add(1)
	nm.mu.Unlock()
	nm.log.Info().Str("container", id).Int("pid", p.pid).Strs("command", spec.command).Msg("started container")
	go nm.watch(p)
	return &messages.NmStartContainerResponse{Pid: int32(p.pid), LogDir: logDir}, nil
}

func (nm *NodeManager) watch(p *containerProc) {
	defer nm.watchers.Done()
	<-p.done
	status, diag := p.status()
	_ = os.RemoveAll(p.workDir)
	_ = os.Remove(filepath.Dir(p.workDir)) // the application's folder, once empty
	nm.log.Info().Str("container", p.id).Int("exitStatus", status).Msg("container completed")
	nm.mu.Lock()
	delete(nm.containers, p.id)
	nm.completed = append(nm.completed, &messages.RmContainerStatus{ContainerId: p.id,
		State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: int32(status), Diagnostics: diag})
	nm.mu.Unlock()
	nm.kickHeartbeat()
}

func (nm *NodeManager) stopContainer(id string, status int32, diag string) bool {
	nm.mu.Lock()
	p, ok := nm.containers[id]
	nm.mu.Unlock()
	if !ok {
		return false
	}
	if diag == "" {
		diag = "Container killed on request"
	}
	nm.log.Info().Str("container", id).Msg("stopping container")
	p.stop(nm.cfg.KillGrace, int(status), diag)
	return true
}

// Containers returns the ids of the running containers.
func (nm *NodeManager) Containers() []string {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	ids := make([]string, 0, len(nm.containers))
	for id := range nm.containers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// newNMEndpoint returns the node manager's endpoint (YARN's
// ContainerManager): a Router with one handler per ask, so that any other
// message fails its asker with "Unsupported message".
func newNMEndpoint(nm *NodeManager) *actor.Router {
	r := actor.NewRouter()
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmStartContainer) (*messages.NmStartContainerResponse, error) {
		// Ids first: whoever asks, an id that is no id is refused as such.
		if err := cluster.ValidateAppID(m.GetAppId()); err != nil {
			return nil, err
		}
		if err := cluster.ValidateContainerID(m.GetContainer().GetContainerId()); err != nil {
			return nil, err
		}
		if err := nm.requireRM(ctx, "container start"); err != nil {
			return nil, err
		}
		return nm.startContainer(m)
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmStopContainer) (*messages.NmStopContainerResponse, error) {
		if err := nm.requireRM(ctx, "container stop"); err != nil {
			return nil, err
		}
		nm.stopContainer(m.GetContainerId(), m.GetExitStatus(), m.GetDiagnostics())
		return &messages.NmStopContainerResponse{}, nil
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmGetApplicationLogs) (*messages.NmApplicationLogs, error) {
		if err := nm.requireLogAccess(ctx, m.GetAppId(), m.GetUser()); err != nil {
			return nil, err
		}
		return nm.applicationLogs(m.GetAppId())
	})
	actor.HandleAsk(r, func(ctx *actor.CallContext, m *messages.NmReadContainerLog) (*messages.NmContainerLogChunk, error) {
		if err := nm.requireLogAccess(ctx, m.GetAppId(), m.GetUser()); err != nil {
			return nil, err
		}
		return nm.readLog(m)
	})
	return r
}
