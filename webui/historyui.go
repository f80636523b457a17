package webui

// This file holds HistoryServerUI, the history server's web UI (Spark's
// HistoryServer on spark.history.ui.port): the list of applications, each
// one's pages under /history/{appId}/, and the REST API.

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// HistoryApp is an application as a history server lists it.
type HistoryApp struct {
	ID, AttemptID, Name, User, Version string
	Start, End                         time.Time // End is zero while it runs (its ApplicationEnd's, or its finished log's last write)
	LastUpdated                        time.Time // when its log last changed
	// Completed reports whether its log is finished (its driver ended).
	Completed bool
	// Error is the application's error; "" when it succeeded or runs.
	Error string
	// Problems says what of its log could not be read (lines cut short or
	// that do not decode); empty when all of it was read.
	Problems []string
}

// Duration is how long the application ran: to its end, or to its log's
// last change while it runs.
func (a HistoryApp) Duration() time.Duration {
	end := a.End
	if end.IsZero() {
		end = a.LastUpdated
	}
	if a.Start.IsZero() || end.Before(a.Start) {
		return 0
	}
	return end.Sub(a.Start)
}

// HistorySource is what a HistoryServerUI shows: the applications of a
// folder of event logs and each one's store (a history.Provider).
type HistorySource interface {
	// Dir returns the folder of the logs, for the list's heading.
	Dir() string
	// Applications returns the applications, the most recently started
	// first.
	Applications() []HistoryApp
	// Store returns application id's store, up to date with its log, and
	// what of the log could not be read. It returns a nil store for an
	// id it does not hold (the UI answers 404), and with a store, an
	// error reading the log (the pages show it with the problems).
	Store(id string) (*AppStore, []string, error)
}

// HistoryServerUI is a history server's web UI as an http.Handler.
//
// Routes: / (the applications; ?showIncomplete=true lists those still
// running instead of the finished ones), /history/{appId}/... (the
// application's pages, as its driver's UI drew them: jobs, a job's tasks,
// executors, environment), /metrics, and the REST API:
// /api/v1/applications (?status=completed|running) and, for each
// application, every route of its driver's API under
// /api/v1/applications/{appId}/.
type HistoryServerUI struct {
	src HistorySource
	o   options
	h   http.Handler
}

// NewHistoryServerUI returns the UI of the applications src holds.
func NewHistoryServerUI(src HistorySource, opts ...Option) *HistoryServerUI {
	u := &HistoryServerUI{src: src, o: buildOptions(opts)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", u.listPage)
	mux.HandleFunc("GET /history/{id}/", u.appPages)
	mux.HandleFunc("GET /history/{id}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusFound)
	})
	mux.HandleFunc("GET /api/v1/applications", u.apiApplications)
	mux.HandleFunc("GET /api/v1/applications/{id}", u.appAPI)
	mux.HandleFunc("GET /api/v1/applications/{id}/", u.appAPI)
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no such API route: "+r.URL.Path)
	})
	u.h = u.o.finish(mux)
	return u
}

// ServeHTTP implements http.Handler.
func (u *HistoryServerUI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.h.ServeHTTP(w, r) }

// historyView is the list page's data.
type historyView struct {
	Apps           []HistoryApp
	Incomplete     bool // the list shows the applications still running
	Other          int  // how many the other list holds
	CompletedCount int
}

func (u *HistoryServerUI) listPage(w http.ResponseWriter, r *http.Request) {
	v := historyView{Incomplete: r.URL.Query().Get("showIncomplete") == "true"}
	for _, a := range u.src.Applications() {
		if a.Completed != v.Incomplete {
			v.Apps = append(v.Apps, a)
		} else {
			v.Other++
		}
	}
	render(w, r, "history", page{Title: "History Server", Heading: "Event log directory: " + u.src.Dir(),
		Nav: nav("/", navLink{Href: "/", Label: "Applications"}), Data: v}, u.o.beforeSend)
}

// appUI returns the UI of application id, served under base, with the
// problems of its log shown on every page; ok is false (and the answer
// written) when there is none.
func (u *HistoryServerUI) appUI(w http.ResponseWriter, r *http.Request, id, base string) (http.Handler, bool) {
	store, problems, err := u.src.Store(id)
	if store == nil {
		msg := "no such application: " + id
		if err != nil {
			msg = err.Error()
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			writeJSONError(w, http.StatusNotFound, msg)
		} else {
			http.Error(w, msg, http.StatusNotFound)
		}
		return nil, false
	}
	if err != nil {
		problems = append(problems, err.Error())
	}
	opts := []Option{WithBasePath(base), withNotices(notices(problems)), WithLogger(u.o.log), WithRedaction(u.o.redaction)}
	return NewApplicationUI(store, opts...), true
}

func (u *HistoryServerUI) appPages(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	base := "/history/" + id
	h, ok := u.appUI(w, r, id, base)
	if !ok {
		return
	}
	http.StripPrefix(base, h).ServeHTTP(w, r)
}

func (u *HistoryServerUI) appAPI(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h, ok := u.appUI(w, r, id, "/history/"+id)
	if !ok {
		return
	}
	h.ServeHTTP(w, r)
}

func (u *HistoryServerUI) apiApplications(w http.ResponseWriter, r *http.Request) {
	status := strings.ToLower(r.URL.Query().Get("status"))
	if status != "" && status != "completed" && status != "running" {
		writeJSONError(w, http.StatusBadRequest, "status must be completed or running, not "+status)
		return
	}
	out := []ApplicationInfo{}
	for _, a := range u.src.Applications() {
		if status == "completed" && !a.Completed || status == "running" && a.Completed {
			continue
		}
		out = append(out, historyAppInfo(a))
	}
	writeJSON(w, out)
}

// historyAppInfo is a's Spark ApplicationInfo.
func historyAppInfo(a HistoryApp) ApplicationInfo {
	return ApplicationInfo{ID: a.ID, Name: a.Name, Attempts: []ApplicationAttemptInfo{
		attemptInfo(a.AttemptID, a.User, a.Version, a.Start, a.End, a.LastUpdated, a.Duration(), a.Completed)}}
}

// notices are the notices of a log's problems on its application's pages.
func notices(problems []string) []string {
	if len(problems) == 0 {
		return nil
	}
	const most = 5
	out := []string{fmt.Sprintf("Not all of this application's event log could be read: %d problem(s); what could be read is shown.", len(problems))}
	for i, p := range problems {
		if i == most {
			out = append(out, fmt.Sprintf("... and %d more", len(problems)-most))
			break
		}
		out = append(out, p)
	}
	return out
}
