package webui

// This file holds ApplicationUI, an application's pages and REST API
// served from an AppStore alone (what a history server shows), and what
// it shares with the live DriverUI: the routes, the navigation and the
// base path every link starts with.

import (
	"net/http"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// WithBasePath makes every link of an application's pages start with base
// (Spark's spark.ui.proxyBase), for a UI mounted under a path with
// http.StripPrefix: a history server serves an application's pages under
// "/history/{appId}". The routes themselves stay at the root. "" (the
// default) is the live UI's. A trailing "/" is dropped and a leading one
// added.
func WithBasePath(base string) Option {
	return optionFunc(func(o *options) {
		base = strings.TrimRight(base, "/")
		if base != "" && !strings.HasPrefix(base, "/") {
			base = "/" + base
		}
		o.base = base
	})
}

// appUI is an application's pages over its store: what ApplicationUI
// serves, and DriverUI with the live driver's extras.
type appUI struct {
	store *AppStore
	o     options
	// d is the live driver; nil when the pages are served from the store
	// alone (no heartbeats, endpoints page, allocation or live conf).
	d *endpoints.Driver
}

// ApplicationUI serves an application's pages and REST API from an
// AppStore alone, as an http.Handler: /jobs/, /jobs/job/?id=N,
// /executors/, /environment/ and the REST API under /api/v1 (see the
// package documentation). The pages whose data only a live driver has
// (endpoints, dynamic allocation, heartbeats) are left out.
type ApplicationUI struct {
	appUI
	h http.Handler
}

// NewApplicationUI returns the UI of the application that store records.
// With WithBasePath, its links start with the base: mount it with
// http.StripPrefix(base, ui). Its REST API answers at /api/v1/... under
// the same prefix, and also at the root when a server passes requests
// through unchanged.
func NewApplicationUI(store *AppStore, opts ...Option) *ApplicationUI {
	u := &ApplicationUI{appUI: appUI{store: store, o: buildOptions(opts)}}
	mux := http.NewServeMux()
	u.routes(mux)
	u.h = u.o.finish(mux)
	return u
}

// ServeHTTP implements http.Handler.
func (u *ApplicationUI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

// routes adds the application's pages and REST API to mux.
func (u *appUI) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, u.o.base+"/jobs/", http.StatusFound)
	})
	// A page asked for without its trailing slash is redirected under the
	// base: the mux's own redirect would drop the base (a history server
	// serves the UI under http.StripPrefix).
	for _, p := range []string{"/jobs", "/jobs/job", "/executors", "/environment"} {
		mux.HandleFunc("GET "+p, u.addSlash)
	}
	mux.HandleFunc("GET /jobs/{$}", u.jobsPage)
	mux.HandleFunc("GET /jobs/job/{$}", u.jobPage)
	mux.HandleFunc("GET /executors/{$}", u.executorsPage)
	mux.HandleFunc("GET /environment/{$}", u.environmentPage)
	mux.HandleFunc("GET /api/v1/applications", u.apiApplications)
	mux.HandleFunc("GET /api/v1/applications/{id}", u.apiApplication)
	mux.HandleFunc("GET /api/v1/applications/{id}/executors", u.apiExecutors(false))
	mux.HandleFunc("GET /api/v1/applications/{id}/allexecutors", u.apiExecutors(true))
	mux.HandleFunc("GET /api/v1/applications/{id}/jobs", u.apiJobs)
	mux.HandleFunc("GET /api/v1/applications/{id}/jobs/{jobId}", u.apiJob)
	mux.HandleFunc("GET /api/v1/applications/{id}/stages/{stageId}/{attemptId}/taskList", u.apiTaskList)
	mux.HandleFunc("GET /api/v1/applications/{id}/environment", u.apiEnvironment)
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no such API route: "+r.URL.Path)
	})
}

// addSlash redirects a page's path without its trailing slash (one of the
// fixed routes above) to the page under the UI's base, its query kept.
func (u *appUI) addSlash(w http.ResponseWriter, r *http.Request) {
	target := u.href(r.URL.Path + "/")
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusFound)
}

// live reports whether a running driver backs the pages.
func (u *appUI) live() bool { return u.d != nil }

// heartbeats returns the executors' last heartbeats; nil without a live
// driver.
func (u *appUI) heartbeats() map[string]time.Time {
	if u.d == nil {
		return nil
	}
	return u.d.LastHeartbeats()
}

// now is the right edge of the application's time: its end once it
// ended, else the present.
func (u *appUI) now(app AppInfo) time.Time {
	if !app.End.IsZero() {
		return app.End
	}
	return time.Now()
}

func (u *appUI) heading() string { return u.store.Info().Name + " — " + u.appID() }

// appID returns the application's id: the store's, else (live) spark.app.id
// of the driver's conf, set once the resource manager gave one.
func (u *appUI) appID() string {
	if id := u.store.Info().ID; id != "" || u.d == nil {
		return id
	}
	return u.d.Env().Conf().Get(KeyAppID, "")
}

// href returns path under the UI's base.
func (u *appUI) href(path string) string { return u.o.base + path }
