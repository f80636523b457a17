package nodemanager

// This file holds the node manager's snapshot of its running containers,
// for its web UI.

import (
	"sort"
	"time"
)

// ContainerInfo describes a running container of a node manager.
type ContainerInfo struct {
	ID, AppID string
	User      string // the application's owner
	PID       int
	MemoryMB  int64
	Cores     int
	Started   time.Time
	LogDir    string // its stdout and stderr
}

// RunningContainers returns the node's running containers, sorted by id.
func (nm *NodeManager) RunningContainers() []ContainerInfo {
	nm.mu.Lock()
	out := make([]ContainerInfo, 0, len(nm.containers))
	for _, p := range nm.containers {
		out = append(out, ContainerInfo{ID: p.id, AppID: p.appID, User: p.user, PID: p.pid, MemoryMB: p.memoryMB, Cores: p.cores,
			Started: p.started, LogDir: p.logDir})
	}
	nm.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
