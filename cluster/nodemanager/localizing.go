package nodemanager

// This file holds the start of a container that has resources to localize
// (YARN's LOCALIZING container): accepted at once, started in the
// background once its resources are in its working folder, stopped while
// it waits, and completed with a diagnostic when localization fails.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/messages"
)

// localizing is a container that localizes its resources and has no
// process yet. A stop cancels ctx; the container then reports the stop's
// status. Its fields but ctx and cancel are guarded by the node manager's
// mu.
type localizing struct {
	appID   string
	ctx     context.Context
	cancel  context.CancelFunc
	stopped bool
	status  int
	diag    string
}

// newLocalizing returns a localizing container of appID whose ctx ends
// with parent.
func newLocalizing(parent context.Context, appID string) *localizing {
	ctx, cancel := context.WithCancel(parent)
	return &localizing{appID: appID, ctx: ctx, cancel: cancel}
}

// stop records a stop with its status and diagnostics and cancels the
// localization; nm.mu is held.
func (l *localizing) stop(status int, diag string) {
	if !l.stopped {
		l.stopped, l.status, l.diag = true, status, diag
	}
	l.cancel()
}

// checkResources refuses resources that could not be localized into a
// working folder: a name that is no resource name, a name twice or one of
// the launch context's own files.
func checkResources(lc *messages.RmLaunchContext) error {
	seen := map[string]bool{}
	for _, res := range lc.GetResources() {
		name := res.GetName()
		if err := cluster.ValidateResourceName(res.GetKind(), name); err != nil {
			return err
		}
		if _, clash := lc.GetFiles()[name]; clash || seen[name] {
			return fmt.Errorf("%w: %q names two files of the working folder", cluster.ErrDuplicateResource, name)
		}
		seen[name] = true
	}
	return nil
}

// startLocalized answers the start of a container (admitted with loc) at
// once and localizes its resources, then starts it, in the background.
func (nm *NodeManager) startLocalized(loc *localizing, spec containerSpec, lc *messages.RmLaunchContext, workDir, logDir string) (*messages.NmStartContainerResponse, error) {
	err := nm.keepACLs(spec.appID, lc.GetAcls())
	if err == nil {
		err = privatefile.MkdirAll(logDir) // the answer names it
	}
	if err != nil {
		nm.mu.Lock()
		delete(nm.localizing, spec.id)
		nm.forgetACLsLocked(spec.appID)
		nm.mu.Unlock()
		loc.cancel()
		nm.starting.Done()
		return nil, fmt.Errorf("cluster: container %s: %w", spec.id, err)
	}
	nm.loc.acquire(spec.appID)
	nm.log.Info().Str("container", spec.id).Int("resources", len(lc.GetResources())).Msg("localizing container")
	go nm.localizeAndLaunch(loc, spec, lc.GetResources(), workDir, logDir)
	return &messages.NmStartContainerResponse{LogDir: logDir}, nil
}

// localizeAndLaunch localizes resources into workDir and starts the
// container, whose program is the localized PROGRAM when there is one. A
// failure, or a stop before the start, completes the container.
func (nm *NodeManager) localizeAndLaunch(loc *localizing, spec containerSpec, resources []*messages.RmLocalResource, workDir, logDir string) {
	defer nm.starting.Done()
	defer loc.cancel()
	exe, err := nm.loc.localize(loc.ctx, spec.appID, spec.id, resources, workDir)
	if err == nil && exe == "" {
		exe = nm.cfg.Executable
	}
	if err == nil {
		err = loc.ctx.Err() // stopped meanwhile
	}
	var p *containerProc
	launched := err == nil
	if launched {
		p, err = launchContainer(spec, nm.cfg.Launcher, exe, workDir, logDir)
	}
	nm.mu.Lock()
	delete(nm.localizing, spec.id)
	if err == nil {
		p.localized = true
		nm.adoptLocked(p, spec)
		if loc.stopped {
			p.stop(nm.cfg.KillGrace, loc.status, loc.diag)
		}
		nm.mu.Unlock()
		return
	}
	status, diag := cluster.ContainerExitInvalid, strings.TrimPrefix(err.Error(), "cluster: ")
	switch {
	case loc.stopped:
		status, diag = loc.status, loc.diag
	case nm.closed:
		status, diag = cluster.ContainerExitKilledByRM, "Container killed: node manager shutting down"
	case launched:
		diag = "Exception from container-launch.\n" + diag
	}
	nm.completed = append(nm.completed, &messages.RmContainerStatus{ContainerId: spec.id,
		State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: int32(status), Diagnostics: diag})
	nm.forgetACLsLocked(spec.appID)
	nm.mu.Unlock()
	if status == cluster.ContainerExitInvalid {
		nm.log.Warn().Str("container", spec.id).Str("diagnostics", diag).Msg("container failed before it started")
	} else {
		nm.log.Info().Str("container", spec.id).Int("exitStatus", status).Msg("container stopped while it localized")
	}
	_ = privatefile.RemoveAll(workDir)
	nm.loc.release(spec.appID)
	_ = os.Remove(filepath.Dir(workDir)) // the application's folder, once empty
	nm.kickHeartbeat()
}
