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
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/messages"
)

// startContainer starts the container req asks for. A container without
// resources to localize starts at once: the answer carries its process id.
// One with resources is answered as soon as it is accepted; it localizes
// them and starts in the background (startLocalized), and a failure
// completes it with a diagnostic, as a process that exits does.
func (nm *NodeManager) startContainer(req *messages.NmStartContainer) (*messages.NmStartContainerResponse, error) {
	c, lc := req.GetContainer(), req.GetLaunchContext()
	id := c.GetContainerId()
	// The ids become path parts: only ids of the resource manager's form.
	if err := cluster.ValidateAppID(req.GetAppId()); err != nil {
		return nil, err
	}
	if err := cluster.ValidateContainerID(id); err != nil {
		return nil, err
	}
	if err := checkResources(lc); err != nil {
		return nil, fmt.Errorf("cluster: container %s: %w", id, err)
	}
	var loc *localizing
	if len(lc.GetResources()) > 0 {
		loc = newLocalizing(nm.stopCtx, req.GetAppId())
	}
	if err := nm.admit(req.GetAppId(), id, lc.GetAcls(), loc); err != nil {
		return nil, err
	}
	spec := containerSpec{id: id, appID: req.GetAppId(), command: lc.GetCommand(),
		env: lc.GetEnvironment(), files: lc.GetFiles(),
		memoryMB: c.GetResource().GetMemoryMb(), cores: int(c.GetResource().GetCores()), nodeHost: nm.env.Address().Host,
		secret: lc.GetSecret(), passEnv: nm.cfg.EnvWhitelist, user: lc.GetAcls().GetOwner(), webUI: nm.cfg.WebUI}
	workDir := filepath.Join(nm.cfg.Dir, "apps", spec.appID, id)
	logDir := filepath.Join(nm.cfg.Dir, "logs", spec.appID, id)
	if loc != nil {
		return nm.startLocalized(loc, spec, lc, workDir, logDir)
	}
	defer nm.starting.Done()
	if err := nm.keepACLs(spec.appID, lc.GetAcls()); err != nil {
		return nil, fmt.Errorf("cluster: container %s: %w", id, err)
	}
	p, err := launchContainer(spec, nm.cfg.Launcher, nm.cfg.Executable, workDir, logDir)
	if err != nil {
		removeWorkDir(workDir)
		nm.forgetACLs(spec.appID)
		return nil, err
	}
	nm.mu.Lock()
	if nm.closed {
		nm.mu.Unlock()
		p.stop(nm.cfg.KillGrace, cluster.ContainerExitKilledByRM, "node manager shutting down")
		<-p.done
		removeWorkDir(workDir)
		nm.forgetACLs(spec.appID)
		return nil, errors.New("cluster: node manager is shutting down")
	}
	nm.adoptLocked(p, spec)
	nm.mu.Unlock()
	return &messages.NmStartContainerResponse{Pid: int32(p.pid), LogDir: logDir}, nil
}

// admit checks that the node takes the container id of appID and counts
// its start in nm.starting (the caller ends it); loc, when set, records it
// as localizing. It keeps the application's ACLs.
func (nm *NodeManager) admit(appID, id string, acls *messages.RmAppAcls, loc *localizing) error {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	if nm.closed {
		return errors.New("cluster: node manager is shutting down")
	}
	if _, dup := nm.containers[id]; dup {
		return fmt.Errorf("cluster: container %s is already running", id)
	}
	if _, dup := nm.localizing[id]; dup {
		return fmt.Errorf("cluster: container %s is already localizing", id)
	}
	nm.starting.Add(1)
	if acls != nil {
		nm.acls[appID] = acls
	}
	if loc != nil {
		nm.localizing[id] = loc
	}
	return nil
}

// adoptLocked makes the started process p the running container of spec
// and watches it; nm.mu is held.
func (nm *NodeManager) adoptLocked(p *containerProc, spec containerSpec) {
	p.memoryMB, p.cores, p.started = spec.memoryMB, spec.cores, time.Now()
	nm.containers[spec.id] = p
	nm.watchers.Add(1)
	nm.log.Info().Str("container", spec.id).Int("pid", p.pid).Strs("command", spec.command).Msg("started container")
	go nm.watch(p)
}

// removeWorkDir removes the working folder of a container that has ended
// or never started, and its application's folder once that is empty.
func removeWorkDir(workDir string) {
	_ = privatefile.RemoveAll(workDir)
	_ = os.Remove(filepath.Dir(workDir))
}

func (nm *NodeManager) watch(p *containerProc) {
	defer nm.watchers.Done()
	<-p.done
	status, diag := p.status()
	if err := privatefile.RemoveAll(p.workDir); err != nil {
		nm.log.Warn().Err(err).Str("container", p.id).Msg("cannot remove the container's working folder")
	}
	if p.localized {
		nm.loc.release(p.appID)
	}
	_ = os.Remove(filepath.Dir(p.workDir)) // the application's folder, once empty
	nm.log.Info().Str("container", p.id).Int("exitStatus", status).Msg("container completed")
	nm.mu.Lock()
	delete(nm.containers, p.id)
	nm.completed = append(nm.completed, &messages.RmContainerStatus{ContainerId: p.id,
		State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: int32(status), Diagnostics: diag})
	nm.forgetACLsLocked(p.appID)
	nm.mu.Unlock()
	nm.kickHeartbeat()
}

func (nm *NodeManager) stopContainer(id string, status int32, diag string) bool {
	if diag == "" {
		diag = "Container killed on request"
	}
	nm.mu.Lock()
	p, ok := nm.containers[id]
	if loc, localizing := nm.localizing[id]; !ok && localizing {
		loc.stop(int(status), diag)
		nm.mu.Unlock()
		nm.log.Info().Str("container", id).Msg("stopping container while it localizes")
		return true
	}
	nm.mu.Unlock()
	if !ok {
		return false
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
