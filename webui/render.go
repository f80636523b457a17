package webui

// This file holds the page templates (embedded) and how a page is rendered:
// into a buffer from a snapshot, then written, so that a slow client holds
// no lock.

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

var funcs = template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		d := time.Since(t)
		if d < time.Second {
			return "now"
		}
		return d.Round(time.Second).String() + " ago"
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Format("2006-01-02 15:04:05")
	},
	"ms":       func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"duration": formatDuration,
	"bytes":    formatBytes,
	"pct": func(done, total int) int {
		if total <= 0 {
			return 0
		}
		return done * 100 / total
	},
	"mb": func(mb int64) string {
		if mb >= 1024 && mb%1024 == 0 {
			return fmt.Sprintf("%d GB", mb/1024)
		}
		return fmt.Sprintf("%d MB", mb)
	},
	// pathEscape escapes a value for one segment of a URL's path: "/",
	// "?", "#" and "%" in it stay in that segment.
	"pathEscape": url.PathEscape,
	"rate": func(r float64) string {
		if r < 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f", r)
	},
}

// pages are the templates, each executed as "layout" with its own "content".
var pages = parsePages("jobs", "job", "flow", "history", "executors", "endpoints", "environment", "rmapps", "rmnodes", "nmcontainers")

func parsePages(names ...string) map[string]*template.Template {
	m := make(map[string]*template.Template, len(names))
	for _, name := range names {
		m[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/timeline.html", "templates/"+name+".html"))
	}
	return m
}

// formatDuration formats d as Spark's UI does (UIUtils.formatDuration):
// "85 ms", "0.4 s", "10 s", "1.5 min", "25 min", "2.1 h".
func formatDuration(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 100 {
		return fmt.Sprintf("%d ms", ms)
	}
	s := float64(ms) / 1000
	switch m := s / 60; {
	case s < 1:
		return fmt.Sprintf("%.1f s", s)
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case m < 10:
		return fmt.Sprintf("%.1f min", m)
	case m < 60:
		return fmt.Sprintf("%.0f min", m)
	default:
		return fmt.Sprintf("%.1f h", m/60)
	}
}

// formatBytes formats n bytes as Spark's UI does (Utils.bytesToString):
// "512.0 B", "1024.0 KiB", "1.5 MiB".
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 2*1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// navLink is an entry of a page's navigation bar.
type navLink struct {
	Href, Label string
	Active      bool
}

// page is what every template gets.
type page struct {
	Title   string // the product: "Spark Jobs", "ResourceManager"
	Heading string
	Nav     []navLink
	User    string // the authenticated user's name (see User), shown in the header
	// Notices are shown above the content: what of a history server's
	// event log could not be read.
	Notices []string
	Data    any
}

// render executes the page template for request r into a buffer and
// writes it; hook (tests only) runs between the two.
func render(w http.ResponseWriter, r *http.Request, name string, p page, hook func()) {
	p.User, _ = User(r.Context())
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	if hook != nil {
		hook()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

func nav(active string, links ...navLink) []navLink {
	for i := range links {
		links[i].Active = links[i].Href == active
	}
	return links
}
