package webui

// This file holds ResourceManagerUI, the resource manager's web UI (YARN's
// on port 8088): applications and nodes, /api/v1/applications and
// /metrics. It reads the resource manager by asking its endpoint, which
// serialises the asks with everything else the resource manager does.

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// rmAskTimeout bounds a page's asks to the resource manager's endpoint.
const rmAskTimeout = 10 * time.Second

// ResourceManagerUI is the resource manager's web UI as an http.Handler.
//
// Routes: / (redirects to /cluster/apps), /cluster/apps, /cluster/nodes,
// /metrics, and /api/v1/applications (?state=RUNNING,...),
// /api/v1/applications/{id}, /api/v1/nodes.
type ResourceManagerUI struct {
	rm *actor.Ref
	o  options
	h  http.Handler
}

// NewResourceManagerUI returns the UI of the resource manager whose
// endpoint is rm (the ResourceManager endpoint's ref, local or remote).
func NewResourceManagerUI(rm *actor.Ref, opts ...Option) *ResourceManagerUI {
	u := &ResourceManagerUI{rm: rm, o: buildOptions(opts)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/cluster/apps", http.StatusFound)
	})
	mux.HandleFunc("GET /cluster/apps", u.appsPage)
	mux.HandleFunc("GET /cluster/nodes", u.nodesPage)
	mux.HandleFunc("GET /api/v1/applications", u.apiApps)
	mux.HandleFunc("GET /api/v1/applications/{id}", u.apiApp)
	mux.HandleFunc("GET /api/v1/nodes", u.apiNodes)
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no such API route: "+r.URL.Path)
	})
	u.h = u.o.finish(mux)
	return u
}

// ServeHTTP implements http.Handler.
func (u *ResourceManagerUI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

// rmApp is an application as the pages and the API show it; the JSON
// names are those of YARN's REST API (ws/v1/cluster/apps).
type rmApp struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	User         string  `json:"user"`
	Queue        string  `json:"queue"`
	State        string  `json:"state"`
	FinalStatus  string  `json:"finalStatus"`
	Progress     float64 `json:"progress"`
	TrackingURL  string  `json:"trackingUrl"`
	Diagnostics  string  `json:"diagnostics"`
	StartedTime  int64   `json:"startedTime"`
	FinishedTime int64   `json:"finishedTime"`
	ElapsedTime  int64   `json:"elapsedTime"`
	AMHost       string  `json:"amHost"`
	DriverURL    string  `json:"driverUrl"`
	// RunningContainers counts the application's running containers, its
	// AM's included (YARN's "Running Containers", as the nodes page counts).
	RunningContainers int       `json:"runningContainers"`
	TasksTotal        int       `json:"tasksTotal"`
	TasksDone         int       `json:"tasksDone"`
	Start             time.Time `json:"-"`
	Finish            time.Time `json:"-"`
}

func appFromReport(r *messages.RmApplicationReport, now time.Time) rmApp {
	a := rmApp{ID: r.GetAppId(), Name: r.GetName(), User: r.GetUser(), Queue: r.GetQueue(),
		State:       strings.TrimPrefix(r.GetState().String(), "RM_APP_STATE_"),
		FinalStatus: strings.TrimPrefix(r.GetFinalStatus().String(), "RM_FINAL_STATUS_"),
		TrackingURL: r.GetTrackingUrl(), Diagnostics: r.GetDiagnostics(), StartedTime: r.GetStartTimeMs(),
		FinishedTime: r.GetFinishTimeMs(), AMHost: r.GetAmHost(), DriverURL: r.GetDriverUrl(),
		RunningContainers: int(r.GetRunningContainers()), TasksTotal: int(r.GetTasksTotal()), TasksDone: int(r.GetTasksDone()),
		Start: time.UnixMilli(r.GetStartTimeMs())}
	end := now
	if a.FinishedTime != 0 {
		a.Finish = time.UnixMilli(a.FinishedTime)
		end = a.Finish
	}
	a.ElapsedTime = end.Sub(a.Start).Milliseconds()
	// The report counts executor containers; the AM's runs until the
	// application ends.
	if r.GetAmContainerId() != "" && a.FinishedTime == 0 {
		a.RunningContainers++
	}
	switch {
	case a.TasksTotal > 0:
		a.Progress = float64(a.TasksDone) * 100 / float64(a.TasksTotal)
	case a.FinalStatus == "SUCCEEDED":
		a.Progress = 100
	}
	return a
}

// rmNode is a node as the pages and the API show it.
type rmNode struct {
	ID              string    `json:"id"`
	Address         string    `json:"nodeHostName"`
	State           string    `json:"state"`
	Containers      int       `json:"numContainers"`
	MemUsedMB       int64     `json:"usedMemoryMB"`
	MemFreeMB       int64     `json:"availMemoryMB"`
	CoresUsed       int       `json:"usedVirtualCores"`
	CoresFree       int       `json:"availableVirtualCores"`
	LastHealthMs    int64     `json:"lastHealthUpdate"`
	LastHeartbeat   time.Time `json:"-"`
	CapabilityMemMB int64     `json:"-"`
}

func (u *ResourceManagerUI) apps(ctx context.Context, states ...messages.RmAppState) ([]rmApp, error) {
	ctx, cancel := context.WithTimeout(ctx, rmAskTimeout)
	defer cancel()
	r, err := actor.AskAs[*messages.RmApplications](ctx, u.rm, &messages.RmGetApplications{States: states})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]rmApp, 0, len(r.GetApps()))
	for _, a := range r.GetApps() {
		out = append(out, appFromReport(a, now))
	}
	return out, nil
}

func (u *ResourceManagerUI) nodes(ctx context.Context) ([]rmNode, error) {
	ctx, cancel := context.WithTimeout(ctx, rmAskTimeout)
	defer cancel()
	r, err := actor.AskAs[*messages.RmClusterNodes](ctx, u.rm, &messages.RmGetClusterNodes{})
	if err != nil {
		return nil, err
	}
	out := make([]rmNode, 0, len(r.GetNodes()))
	for _, n := range r.GetNodes() {
		c, used := n.GetCapability(), n.GetUsed()
		out = append(out, rmNode{ID: n.GetNodeId(), Address: n.GetAddress(), State: n.GetState(),
			Containers: int(n.GetNumContainers()), MemUsedMB: used.GetMemoryMb(), MemFreeMB: c.GetMemoryMb() - used.GetMemoryMb(),
			CoresUsed: int(used.GetCores()), CoresFree: int(c.GetCores() - used.GetCores()),
			LastHealthMs: n.GetLastHeartbeatMs(), LastHeartbeat: msTime(n.GetLastHeartbeatMs()), CapabilityMemMB: c.GetMemoryMb()})
	}
	return out, nil
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func (u *ResourceManagerUI) nav(active string) []navLink {
	return nav(active, navLink{Href: "/cluster/apps", Label: "Applications"}, navLink{Href: "/cluster/nodes", Label: "Nodes"})
}

// rmAppsView is the applications page's data.
type rmAppsView struct {
	Apps           []rmApp
	Running, Nodes int
}

func (u *ResourceManagerUI) appsPage(w http.ResponseWriter, r *http.Request) {
	apps, err := u.apps(r.Context())
	if err != nil {
		http.Error(w, "asking the resource manager: "+err.Error(), http.StatusBadGateway)
		return
	}
	nodes, err := u.nodes(r.Context())
	if err != nil {
		http.Error(w, "asking the resource manager: "+err.Error(), http.StatusBadGateway)
		return
	}
	v := rmAppsView{Apps: apps}
	for _, n := range nodes {
		if n.State == "RUNNING" {
			v.Nodes++
		}
	}
	for i, j := 0, len(apps)-1; i < j; i, j = i+1, j-1 { // newest first, as YARN
		v.Apps[i], v.Apps[j] = v.Apps[j], v.Apps[i]
	}
	for _, a := range apps {
		if a.State == "RUNNING" {
			v.Running++
		}
	}
	render(w, r, "rmapps", page{Title: "ResourceManager", Heading: "All Applications", Nav: u.nav("/cluster/apps"), Data: v}, u.o.beforeSend)
}

func (u *ResourceManagerUI) nodesPage(w http.ResponseWriter, r *http.Request) {
	nodes, err := u.nodes(r.Context())
	if err != nil {
		http.Error(w, "asking the resource manager: "+err.Error(), http.StatusBadGateway)
		return
	}
	render(w, r, "rmnodes", page{Title: "ResourceManager", Heading: "Nodes of the cluster", Nav: u.nav("/cluster/nodes"), Data: nodes}, u.o.beforeSend)
}

func (u *ResourceManagerUI) apiApps(w http.ResponseWriter, r *http.Request) {
	var states []messages.RmAppState
	for _, list := range r.URL.Query()["state"] {
		for _, s := range strings.Split(list, ",") {
			v, ok := messages.RmAppState_value["RM_APP_STATE_"+strings.ToUpper(strings.TrimSpace(s))]
			if !ok {
				writeJSONError(w, http.StatusBadRequest, "invalid application state: "+s)
				return
			}
			states = append(states, messages.RmAppState(v))
		}
	}
	apps, err := u.apps(r.Context(), states...)
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "asking the resource manager: "+err.Error())
		return
	}
	writeJSON(w, apps)
}

func (u *ResourceManagerUI) apiApp(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), rmAskTimeout)
	defer cancel()
	rep, err := actor.AskAs[*messages.RmApplicationReport](ctx, u.rm, &messages.RmGetApplicationReport{AppId: id})
	if err != nil {
		if strings.Contains(err.Error(), "doesn't exist") {
			writeJSONError(w, http.StatusNotFound, "unknown application: "+id)
			return
		}
		writeJSONError(w, http.StatusBadGateway, "asking the resource manager: "+err.Error())
		return
	}
	writeJSON(w, appFromReport(rep, time.Now()))
}

func (u *ResourceManagerUI) apiNodes(w http.ResponseWriter, r *http.Request) {
	nodes, err := u.nodes(r.Context())
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "asking the resource manager: "+err.Error())
		return
	}
	writeJSON(w, nodes)
}
