package webui

// This file holds DriverUI, the driver's web UI (Spark's SparkUI on
// spark.ui.port): the application's pages over a store the driver feeds,
// plus what only a live driver has: the endpoints page, heartbeats,
// dynamic allocation and the configuration before an EnvironmentUpdate.

import (
	"maps"
	"net/http"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// AppInfo describes an application: what NewDriverUI is told of it, and
// what an AppStore knows of it (AppStore.Info) from ApplicationStart and
// ApplicationEnd.
type AppInfo struct {
	ID, Name, User string
	AttemptID      string // "" for the first attempt
	Start          time.Time
	Version        string // the appSparkVersion of the REST API (sparkrpc's version)
	// DriverHostPort is the driver's "host:port": with it, the executors
	// page and API list the driver's row, as Spark's do.
	DriverHostPort string
	DriverLogURLs  map[string]string // the driver row's logs
	End            time.Time         // zero while the application runs
	Error          string            // why it failed; "" when it succeeded or runs
}

// DriverUI is the driver's web UI as an http.Handler. It keeps its own
// record of the application (an AppStore) from the driver's listener
// events and reads the driver's env through snapshots, so that a page
// never waits for the scheduler and the scheduler never waits for a page.
//
// Routes: those of ApplicationUI (/, /jobs/, /jobs/job/?id=N,
// /executors/, /environment/ and the REST API), plus /endpoints/,
// /metrics, /api/v1/applications/{id}/allocation and, with
// WithExecutorLogs, /executors/logs/?id=N.
type DriverUI struct {
	appUI
	rates *rateSampler
	h     http.Handler
}

// NewDriverUI returns the UI of driver d, running application app. It adds
// its store to d's listeners; call it before the application's jobs run
// (executors registered before are taken from d). What app says is
// replaced by what an ApplicationStart posted on d says.
func NewDriverUI(d *endpoints.Driver, app AppInfo, opts ...Option) *DriverUI {
	if app.Start.IsZero() {
		app.Start = time.Now()
	}
	// The driver's properties are redacted again with its own regex (a
	// regex that does not compile redacts every value).
	re, _ := RedactionRegex(d.Env().Conf())
	opts = append([]Option{WithRedaction(re)}, opts...)
	store := NewAppStore()
	store.OnEvent(endpoints.ApplicationStart{Time: app.Start, AppID: app.ID, AttemptID: app.AttemptID,
		AppName: app.Name, User: app.User, Version: app.Version, DriverHostPort: app.DriverHostPort,
		DriverLogURLs: maps.Clone(app.DriverLogURLs)})
	u := &DriverUI{appUI: appUI{store: store, o: buildOptions(opts), d: d}, rates: newRateSampler()}
	d.AddListener(store)
	store.seed(d.Executors())
	mux := http.NewServeMux()
	u.routes(mux)
	mux.HandleFunc("GET /endpoints/{$}", u.endpointsPage)
	newFlowSource(d).routes(mux, &u.o, u.nav, u.heading)
	mux.HandleFunc("GET /api/v1/applications/{id}/allocation", u.apiAllocation)
	mux.HandleFunc("GET /executors/logs/{$}", u.o.executorLog)
	u.h = u.o.finish(mux)
	return u
}

// Store returns the store the UI shows.
func (u *DriverUI) Store() *AppStore { return u.store }

// ServeHTTP implements http.Handler.
func (u *DriverUI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

// nav returns the navigation bar; the pages that need a live driver are
// left out without one.
func (u *appUI) nav(active string) []navLink {
	links := []navLink{{Href: "/jobs/", Label: "Jobs"}, {Href: "/executors/", Label: "Executors"}}
	if u.live() {
		links = append(links, navLink{Href: "/endpoints/", Label: "Endpoints"})
	}
	links = append(links, navLink{Href: "/environment/", Label: "Environment"})
	if u.live() {
		links = append(links, navLink{Href: "/flow/", Label: "Flow"})
	}
	links = nav(active, links...)
	for i := range links {
		links[i].Href = u.href(links[i].Href)
	}
	return links
}

func (u *DriverUI) endpointsPage(w http.ResponseWriter, r *http.Request) {
	env := u.d.Env()
	v := endpointsView{Env: env.Name(), Address: env.Address().String(), Dropped: env.Dropped(),
		Endpoints: u.rates.sample(env.EndpointStats(), time.Now())}
	render(w, r, "endpoints", page{Title: "Endpoints", Heading: u.heading(), Nav: u.nav("/endpoints/"), Data: v}, u.o.beforeSend)
}
