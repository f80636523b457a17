package nmui

import (
	"fmt"
	"io/fs"
	"net/http"
	"sync/atomic"

	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/webui"
)

// Node is the node manager a UI shows, set once it runs.
type Node struct {
	running atomic.Pointer[nodemanager.NodeManager]
}

// Set makes nm the node manager the UI shows.
func (n *Node) Set(nm *nodemanager.NodeManager) { n.running.Store(nm) }

// Handler returns the web UI of node nodeID (its host:port), showing the
// node manager that n holds; opts are the UI's (its secret, its logger).
func Handler(nodeID string, n *Node, opts ...webui.Option) http.Handler {
	return webui.NewNodeManagerUI(nodeID, n.containers,
		append([]webui.Option{webui.WithMetrics(http.HandlerFunc(n.metrics)), webui.WithContainerLogs(n.readLog)}, opts...)...)
}

// containers converts the node manager's running containers for its UI
// (none before it runs).
func (n *Node) containers() []webui.Container {
	nm := n.running.Load()
	if nm == nil {
		return nil
	}
	cs := nm.RunningContainers()
	out := make([]webui.Container, len(cs))
	for i, c := range cs {
		out[i] = webui.Container{ID: c.ID, AppID: c.AppID, User: c.User, PID: c.PID, MemoryMB: c.MemoryMB, Cores: c.Cores, Started: c.Started, LogDir: c.LogDir}
	}
	return out
}

// metrics serves the node manager's /metrics once it runs.
func (n *Node) metrics(w http.ResponseWriter, r *http.Request) {
	nm := n.running.Load()
	if nm == nil {
		http.Error(w, "the node manager is starting", http.StatusServiceUnavailable)
		return
	}
	nm.MetricsHandler().ServeHTTP(w, r)
}

// readLog reads a container's log for the UI (webui.ContainerLogReader).
func (n *Node) readLog(id, owner, file, requester string, start int64) (webui.ContainerLog, error) {
	nm := n.running.Load()
	if nm == nil {
		return webui.ContainerLog{}, fmt.Errorf("the node manager is starting: %w", fs.ErrNotExist)
	}
	p, err := nm.ReadContainerLog(id, owner, file, requester, start)
	return webui.ContainerLog{Data: p.Data, Start: p.Start, Size: p.Size}, err
}
