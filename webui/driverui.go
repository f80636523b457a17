package webui

// This file holds DriverUI, the driver's web UI (Spark's SparkUI on
// spark.ui.port): the jobs, executors and endpoints pages, the REST API
// and /metrics.

import (
	"net/http"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// AppInfo describes the application a DriverUI shows.
type AppInfo struct {
	ID, Name, User string
	Start          time.Time
	Version        string // the appSparkVersion of the REST API (sparkrpc's version)
}

// DriverUI is the driver's web UI as an http.Handler. It keeps its own
// record of executors and jobs from the driver's listener events and reads
// the driver's env through snapshots, so that a page never waits for the
// scheduler and the scheduler never waits for a page.
//
// Routes: / (redirects to /jobs/), /jobs/, /executors/, /endpoints/,
// /environment/ (the configuration, sensitive values redacted), /metrics,
// and the REST API /api/v1/applications,
// /api/v1/applications/{id}, /api/v1/applications/{id}/executors,
// /api/v1/applications/{id}/allexecutors, /api/v1/applications/{id}/jobs
// (?status=RUNNING|SUCCEEDED|FAILED), /api/v1/applications/{id}/jobs/{jobId}
// and /api/v1/applications/{id}/environment.
type DriverUI struct {
	d      *endpoints.Driver
	app    AppInfo
	o      options
	status *appStatus
	rates  *rateSampler
	h      http.Handler
}

// NewDriverUI returns the UI of driver d, running application app. It adds
// a listener to d; call it before the application's jobs run (executors
// registered before are taken from d).
func NewDriverUI(d *endpoints.Driver, app AppInfo, opts ...Option) *DriverUI {
	if app.Start.IsZero() {
		app.Start = time.Now()
	}
	u := &DriverUI{d: d, app: app, o: buildOptions(opts), status: newAppStatus(), rates: newRateSampler()}
	d.AddListener(u.status)
	u.status.seed(d.Executors())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/jobs/", http.StatusFound)
	})
	mux.HandleFunc("GET /jobs/{$}", u.jobsPage)
	mux.HandleFunc("GET /executors/{$}", u.executorsPage)
	mux.HandleFunc("GET /endpoints/{$}", u.endpointsPage)
	mux.HandleFunc("GET /environment/{$}", u.environmentPage)
	newFlowSource(d).routes(mux, &u.o, u.nav, u.heading)
	mux.HandleFunc("GET /api/v1/applications", u.apiApplications)
	mux.HandleFunc("GET /api/v1/applications/{id}", u.apiApplication)
	mux.HandleFunc("GET /api/v1/applications/{id}/executors", u.apiExecutors(false))
	mux.HandleFunc("GET /api/v1/applications/{id}/allexecutors", u.apiExecutors(true))
	mux.HandleFunc("GET /api/v1/applications/{id}/jobs", u.apiJobs)
	mux.HandleFunc("GET /api/v1/applications/{id}/jobs/{jobId}", u.apiJob)
	mux.HandleFunc("GET /api/v1/applications/{id}/environment", u.apiEnvironment)
	mux.HandleFunc("GET /api/v1/applications/{id}/allocation", u.apiAllocation)
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no such API route: "+r.URL.Path)
	})
	u.h = u.o.finish(mux)
	return u
}

// ServeHTTP implements http.Handler.
func (u *DriverUI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

func (u *DriverUI) nav(active string) []navLink {
	return nav(active, navLink{Href: "/jobs/", Label: "Jobs"}, navLink{Href: "/executors/", Label: "Executors"},
		navLink{Href: "/endpoints/", Label: "Endpoints"}, navLink{Href: "/environment/", Label: "Environment"}, navLink{Href: "/flow/", Label: "Flow"})
}

func (u *DriverUI) heading() string { return u.app.Name + " — " + u.appID() }

// appID returns the application's id: AppInfo's, else spark.app.id of the
// driver's conf (set once the resource manager gave one).
func (u *DriverUI) appID() string {
	if u.app.ID != "" {
		return u.app.ID
	}
	return u.d.Env().Conf().Get(KeyAppID, "")
}

// jobsView is the jobs page's data.
type jobsView struct {
	App                 AppInfo
	Uptime              time.Duration
	Active, Ended       []jobStatus
	Executors, Cores    int
	TasksDone, TasksRun int
}

func (u *DriverUI) jobsPage(w http.ResponseWriter, r *http.Request) {
	v := jobsView{App: u.app, Uptime: time.Since(u.app.Start).Round(time.Second)}
	for _, j := range u.status.jobsSnapshot() {
		if j.Status == "RUNNING" {
			v.Active = append(v.Active, j)
		} else {
			v.Ended = append(v.Ended, j)
		}
		v.TasksDone += j.Completed
		v.TasksRun += j.Active
	}
	for _, ex := range u.status.executorsSnapshot(nil) {
		if ex.IsActive() {
			v.Executors++
			v.Cores += ex.Cores
		}
	}
	render(w, r, "jobs", page{Title: "Spark Jobs", Heading: u.heading(), Nav: u.nav("/jobs/"), Data: v}, u.o.beforeSend)
}

// executorsView is the executors page's data.
type executorsView struct {
	Executors                  []executorStatus
	Active, Dead               int
	Cores, Running, Done, Fail int
	// Allocation is dynamic allocation's state; nil when it is off.
	Allocation *allocationView
}

func (u *DriverUI) executorsPage(w http.ResponseWriter, r *http.Request) {
	v := executorsView{Executors: u.status.executorsSnapshot(u.d.LastHeartbeats()), Allocation: u.allocationView()}
	for _, ex := range v.Executors {
		if ex.IsActive() {
			v.Active++
			v.Cores += ex.Cores
		} else {
			v.Dead++
		}
		v.Running += ex.Active
		v.Done += ex.Completed
		v.Fail += ex.Failed
	}
	render(w, r, "executors", page{Title: "Executors", Heading: u.heading(), Nav: u.nav("/executors/"), Data: v}, u.o.beforeSend)
}

func (u *DriverUI) endpointsPage(w http.ResponseWriter, r *http.Request) {
	env := u.d.Env()
	v := endpointsView{Env: env.Name(), Address: env.Address().String(), Dropped: env.Dropped(),
		Endpoints: u.rates.sample(env.EndpointStats(), time.Now())}
	render(w, r, "endpoints", page{Title: "Endpoints", Heading: u.heading(), Nav: u.nav("/endpoints/"), Data: v}, u.o.beforeSend)
}
