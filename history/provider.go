package history

// This file holds Provider, Spark's FsHistoryProvider: the applications of
// an event log folder, each one's pages replayed from its log on demand.

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/webui"
)

// ErrNoSuchApplication is returned for an application id that no log of
// the folder holds.
var ErrNoSuchApplication = errors.New("history: no such application")

// Provider reads the event logs of a folder: the list of applications from
// each log's application events, and one application's store (its pages)
// replayed from its log when first viewed and brought up to date when
// viewed again. It implements webui.HistorySource. Its methods may be
// called from several goroutines.
type Provider struct {
	cfg Config

	mu   sync.Mutex
	apps map[string]*application // by id
	lru  []string                // ids of applications with a loaded store, least recently viewed first

	stop chan struct{}
	done chan struct{}
}

// application is one log: its summary for the list, and its store while
// it is loaded.
type application struct {
	mu       sync.Mutex // held while its logs are read
	info     eventlog.Info
	sumLog   *eventlog.Log
	sum      summary
	problems problems // of sumLog's readings
	store    *webui.AppStore
	storeLog *eventlog.Log
	loaded   eventlog.Info // info when store was last brought up to date
	storeErr problems      // of storeLog's readings
}

// problems are what readings of a log could not read: the first
// maxProblems, and how many in all.
type problems struct {
	list    []string
	skipped int
}

// maxProblems bounds the problems kept of one log.
const maxProblems = 20

func (p *problems) add(r eventlog.Result, err error) {
	p.skipped += r.Skipped
	for _, pr := range r.Problems {
		if len(p.list) < maxProblems {
			p.list = append(p.list, pr.Error())
		}
	}
	if err != nil && len(p.list) < maxProblems {
		p.list = append(p.list, err.Error())
	}
}

// strings returns the problems as a page shows them.
func (p *problems) strings() []string {
	out := slices.Clone(p.list)
	if more := p.skipped - len(p.list); more > 0 && len(p.list) == maxProblems {
		out = append(out, fmt.Sprintf("and %d more lines skipped", more))
	}
	return out
}

// sameLog reports whether a and b are the same log: a log's file loses
// its ".inprogress" when its application ends.
func sameLog(a, b eventlog.Info) bool {
	return strings.TrimSuffix(a.Path, inProgress) == strings.TrimSuffix(b.Path, inProgress)
}

// inProgress is the suffix of a log being written.
const inProgress = ".inprogress"

// changed reports whether the log of b has grown or changed since a.
func changed(a, b eventlog.Info) bool {
	return !sameLog(a, b) || a.Size != b.Size || !a.ModTime.Equal(b.ModTime) || a.InProgress != b.InProgress
}

// NewProvider returns the provider of cfg's folder, which it reads once
// now and then every cfg.UpdateInterval until Close. A folder that cannot
// be read now is an error.
func NewProvider(cfg Config) (*Provider, error) {
	if cfg.RetainedApplications < 1 {
		cfg.RetainedApplications = 1
	}
	p := &Provider{cfg: cfg, apps: make(map[string]*application), stop: make(chan struct{}), done: make(chan struct{})}
	if err := p.Refresh(); err != nil {
		return nil, err
	}
	go p.run()
	return p, nil
}

// Dir implements webui.HistorySource: the folder of the logs.
func (p *Provider) Dir() string { return p.cfg.Dir }

// Close stops reading the folder again.
func (p *Provider) Close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

func (p *Provider) run() {
	defer close(p.done)
	if p.cfg.UpdateInterval <= 0 {
		<-p.stop
		return
	}
	t := time.NewTicker(p.cfg.UpdateInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if err := p.Refresh(); err != nil {
				p.cfg.Logger.Warn().Err(err).Str("dir", p.cfg.Dir).Msg("cannot read the event log folder")
			}
		}
	}
}

// Refresh reads the folder now: new logs are added to the list, logs that
// grew are read from where their last reading ended, and logs that are
// gone are dropped.
func (p *Provider) Refresh() error {
	infos, err := eventlog.List(p.cfg.Dir)
	if err != nil {
		return fmt.Errorf("history: %s: %w", KeyLogDirectory, err)
	}
	seen := make(map[string]bool, len(infos))
	for _, in := range infos {
		id := in.AppID
		seen[id] = true
		p.mu.Lock()
		a := p.apps[id]
		if a == nil {
			a = &application{}
			p.apps[id] = a
		}
		p.mu.Unlock()
		a.mu.Lock()
		if a.sumLog == nil || changed(a.info, in) {
			if a.sumLog == nil || !sameLog(a.info, in) {
				a.sumLog, a.sum, a.problems = eventlog.Open(in.Path), summary{}, problems{}
			}
			a.info = in
			r, err := a.sumLog.Update(&a.sum)
			a.problems.add(r, err)
			if err != nil {
				p.cfg.Logger.Warn().Err(err).Str("log", in.Path).Msg("cannot read an event log")
			}
		}
		a.mu.Unlock()
	}
	p.mu.Lock()
	for id := range p.apps {
		if !seen[id] {
			delete(p.apps, id)
			p.lru = slices.DeleteFunc(p.lru, func(s string) bool { return s == id })
		}
	}
	p.mu.Unlock()
	return nil
}

// Applications implements webui.HistorySource: the applications of the
// folder, the most recently started first.
func (p *Provider) Applications() []webui.HistoryApp {
	p.mu.Lock()
	apps := make([]*application, 0, len(p.apps))
	for _, a := range p.apps {
		apps = append(apps, a)
	}
	p.mu.Unlock()
	out := make([]webui.HistoryApp, 0, len(apps))
	for _, a := range apps {
		a.mu.Lock()
		out = append(out, a.listed())
		a.mu.Unlock()
	}
	slices.SortFunc(out, func(x, y webui.HistoryApp) int {
		if c := y.Start.Compare(x.Start); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out
}

// listed is what the list shows of a; a.mu is held.
func (a *application) listed() webui.HistoryApp {
	s := a.sum
	h := webui.HistoryApp{ID: a.info.AppID, AttemptID: a.info.AttemptID, Name: s.start.AppName, User: s.start.User,
		Version: s.start.Version, Start: s.start.Time, LastUpdated: a.info.ModTime, Completed: s.ended && !a.info.InProgress,
		Error: s.end.Error, Problems: a.problems.strings()}
	if s.ended {
		h.End = s.end.Time
	}
	if h.Name == "" {
		h.Name = a.info.AppID
	}
	return h
}

// Store implements webui.HistorySource: application id's store, replayed
// from its log when it is not loaded, else brought up to date with what
// its log gained since. Loading one may unload the least recently viewed
// beyond Config.RetainedApplications.
func (p *Provider) Store(id string) (*webui.AppStore, []string, error) {
	p.mu.Lock()
	a := p.apps[id]
	p.mu.Unlock()
	if a == nil {
		return nil, nil, fmt.Errorf("%w: %q", ErrNoSuchApplication, id)
	}
	a.mu.Lock()
	fresh := a.store == nil || !sameLog(a.loaded, a.info)
	if fresh {
		a.store, a.storeLog, a.storeErr = webui.NewAppStore(), eventlog.Open(a.info.Path), problems{}
	}
	var err error
	if fresh || changed(a.loaded, a.info) {
		var r eventlog.Result
		r, err = a.storeLog.Update(a.store)
		a.storeErr.add(r, nil)
		a.loaded = a.info
	}
	store, probs := a.store, a.storeErr.strings()
	a.mu.Unlock()
	p.touch(id)
	return store, probs, err
}

// touch makes id the most recently viewed loaded application, and unloads
// the least recently viewed beyond the bound.
func (p *Provider) touch(id string) {
	p.mu.Lock()
	p.lru = append(slices.DeleteFunc(p.lru, func(s string) bool { return s == id }), id)
	var evict []*application
	for len(p.lru) > p.cfg.RetainedApplications {
		if a := p.apps[p.lru[0]]; a != nil {
			evict = append(evict, a)
		}
		p.lru = p.lru[1:]
	}
	p.mu.Unlock()
	for _, a := range evict {
		a.mu.Lock()
		a.store, a.storeLog, a.loaded = nil, nil, eventlog.Info{}
		a.mu.Unlock()
	}
}
