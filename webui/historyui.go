package webui

// This file holds HistoryServerUI, the history server's web UI (Spark's
// HistoryServer on spark.history.ui.port): the list of applications, each
// one's pages under /history/{appId}/, and the REST API.

import (
	"fmt"
	"net/http"
	"strconv"
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
	// Problems says what of its log the listing could not read (lines cut
	// short, or of the application's start and end that do not decode; the
	// listing skips the other events' lines undecoded, and the
	// application's own pages report theirs).
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
// /api/v1/applications (Spark's ?status=completed|running, minDate,
// maxDate, minEndDate, maxEndDate and limit) and, for each
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

// apiApplications serves /api/v1/applications with Spark's filters:
// status (completed or running, repeatable; any case), minDate and maxDate
// (of the start), minEndDate and maxEndDate (of the end: a running
// application's counts as after every maxEndDate still to come), and limit.
// A date is Spark's text ("2015-02-03T16:42:40.000GMT"), a day
// ("2015-02-03", GMT) or epoch milliseconds. A value that does not parse is
// a 400.
func (u *HistoryServerUI) apiApplications(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	completed, running := true, true
	if sts := q["status"]; len(sts) > 0 {
		completed, running = false, false
		for _, st := range sts {
			switch strings.ToLower(st) {
			case "completed":
				completed = true
			case "running":
				running = true
			default:
				writeJSONError(w, http.StatusBadRequest, "status must be completed or running, not "+st)
				return
			}
		}
	}
	var bounds [4]time.Time // minDate, maxDate, minEndDate, maxEndDate; zero: none
	for i, name := range []string{"minDate", "maxDate", "minEndDate", "maxEndDate"} {
		raw := q.Get(name)
		if raw == "" {
			continue
		}
		t, ok := parseSparkDate(raw)
		if !ok {
			writeJSONError(w, http.StatusBadRequest, "Couldn't parse date: "+raw+
				" ("+name+": yyyy-MM-dd'T'HH:mm:ss.SSSz as 2015-02-03T16:42:40.000GMT, yyyy-MM-dd, or epoch milliseconds)")
			return
		}
		bounds[i] = t
	}
	limit := -1
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "limit must be an integer, not "+raw)
			return
		}
		limit = max(n, 0)
	}
	now := time.Now()
	out := []ApplicationInfo{}
	for _, a := range u.src.Applications() {
		if limit >= 0 && len(out) == limit {
			break
		}
		if a.Completed && !completed || !a.Completed && !running || !inDateRange(a, bounds, now) {
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
