package webui

// This file holds NodeManagerUI, a node manager's web UI (YARN's on port
// 8042): its running containers, their logs and /metrics.

import (
	"net/http"
	"time"
)

// Container is a running container as a node manager's UI shows it.
type Container struct {
	ID    string `json:"id"`
	AppID string `json:"appId"`
	// User is the application's owner: its log URLs name it.
	User     string    `json:"user,omitempty"`
	PID      int       `json:"pid"`
	MemoryMB int64     `json:"totalMemoryNeededMB"`
	Cores    int       `json:"totalVCoresNeeded"`
	Started  time.Time `json:"-"`
	LogDir   string    `json:"containerLogsLink"`
}

// NodeManagerUI is a node manager's web UI as an http.Handler.
//
// Routes: / (the containers page, linking each container's stdout and
// stderr), /node/containerlogs/{containerId}/{user}/{file} (see
// WithContainerLogs), /metrics and /api/v1/containers.
type NodeManagerUI struct {
	nodeID     string
	containers func() []Container
	o          options
	h          http.Handler
}

// NewNodeManagerUI returns the UI of node nodeID; containers returns a
// snapshot of its running containers and must not block.
func NewNodeManagerUI(nodeID string, containers func() []Container, opts ...Option) *NodeManagerUI {
	u := &NodeManagerUI{nodeID: nodeID, containers: containers, o: buildOptions(opts)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", u.containersPage)
	mux.HandleFunc("GET /node/containerlogs/{containerId}/{user}/{file}", u.o.containerLog)
	mux.HandleFunc("GET /api/v1/containers", func(w http.ResponseWriter, _ *http.Request) {
		cs := u.containers()
		if cs == nil {
			cs = []Container{}
		}
		writeJSON(w, cs)
	})
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no such API route: "+r.URL.Path)
	})
	u.h = u.o.finish(mux)
	return u
}

// ServeHTTP implements http.Handler.
func (u *NodeManagerUI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

func (u *NodeManagerUI) containersPage(w http.ResponseWriter, r *http.Request) {
	render(w, r, "nmcontainers", page{Title: "NodeManager", Heading: u.nodeID,
		Nav: nav("/", navLink{Href: "/", Label: "Containers"}), Data: u.containers()}, u.o.beforeSend)
}
