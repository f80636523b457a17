package history

// This file holds Provider, Spark's FsHistoryProvider: the applications of
// an event log folder, each one's pages replayed from its log on demand.

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/webui"
)

// ErrNoSuchApplication is returned for an application id that no log of
// the folder holds.
var ErrNoSuchApplication = errors.New("history: no such application")

// maxReplays bounds the logs replayed into stores at once: each holds a
// store being built, and reading is the machine's work either way.
const maxReplays = 2

// Provider reads the event logs of a folder: the list of applications from
// each log's application events, and one application's store (its pages)
// replayed from its log when first viewed and brought up to date when
// viewed again. It implements webui.HistorySource. Its methods may be
// called from several goroutines; the list never waits for a replay.
type Provider struct {
	cfg Config

	refreshMu sync.Mutex // one Refresh at a time
	replays   chan struct{}

	mu   sync.Mutex
	logs map[string]*application // by logKey
	lru  []*application          // those with a loaded store, least recently viewed first

	stop chan struct{}
	done chan struct{}
}

// NewProvider returns the provider of cfg's folder, which it reads once
// now and then every cfg.UpdateInterval until Close. A folder that cannot
// be read now is an error.
func NewProvider(cfg Config) (*Provider, error) {
	if cfg.RetainedApplications < 1 {
		cfg.RetainedApplications = 1
	}
	p := &Provider{cfg: cfg, replays: make(chan struct{}, maxReplays), logs: make(map[string]*application),
		stop: make(chan struct{}), done: make(chan struct{})}
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
	var update, clean <-chan time.Time
	if p.cfg.UpdateInterval > 0 {
		t := time.NewTicker(p.cfg.UpdateInterval)
		defer t.Stop()
		update = t.C
	}
	if c := p.cfg.Cleaner; c.Enabled && c.Interval > 0 {
		p.clean() // at start, as Spark's
		t := time.NewTicker(c.Interval)
		defer t.Stop()
		clean = t.C
	}
	for {
		select {
		case <-p.stop:
			return
		case <-update:
			p.refresh()
		case <-clean:
			p.clean()
		}
	}
}

// refresh is Refresh, its failure logged.
func (p *Provider) refresh() {
	if err := p.Refresh(); err != nil {
		p.cfg.Logger.Warn().Err(err).Str("dir", p.cfg.Dir).Msg("cannot read the event log folder")
	}
}

// clean deletes the logs the Cleaner says to, and lists the folder again
// when it deleted any.
func (p *Provider) clean() {
	deleted := p.cfg.Cleaner.clean(p.cfg.Dir, time.Now(), func(path string, err error) {
		p.cfg.Logger.Warn().Err(err).Str("path", path).Msg("the cleaner could not delete an event log")
	})
	if len(deleted) == 0 {
		return
	}
	p.cfg.Logger.Info().Strs("deleted", deleted).Msg("deleted old event logs")
	p.refresh()
}

// Refresh reads the folder now: new logs are added to the list, logs that
// changed are read from where their last reading ended, and logs that are
// gone are dropped.
func (p *Provider) Refresh() error {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	infos, err := eventlog.List(p.cfg.Dir)
	if err != nil {
		return fmt.Errorf("history: %s: %w", KeyLogDirectory, err)
	}
	seen := make(map[string]bool, len(infos))
	for _, in := range infos {
		key := logKey(in)
		seen[key] = true
		p.mu.Lock()
		a := p.logs[key]
		if a == nil {
			a = &application{}
			p.logs[key] = a
		}
		last, sumLog, sum, probs := a.info, a.sumLog, a.sum, a.problems
		p.mu.Unlock()
		if sumLog != nil && !changed(last, in) {
			continue
		}
		if sumLog == nil || rewritten(last, in) {
			sumLog, sum, probs = eventlog.OpenApplicationEvents(in.Path), summary{}, problems{}
		}
		// Read outside the lock: the list shows the last reading meanwhile.
		r, err := readSafely(sumLog, &sum)
		if r.Restarted { // replaced: read the new log alone
			sumLog, sum, probs = eventlog.OpenApplicationEvents(in.Path), summary{}, problems{}
			r, err = readSafely(sumLog, &sum)
		}
		probs.add(r, err)
		switch {
		case err != nil:
			p.cfg.Logger.Warn().Err(err).Str("log", in.Path).Msg("cannot read an event log")
		case sum.start.Time.IsZero() && !in.InProgress:
			p.cfg.Logger.Warn().Str("log", in.Path).Strs("problems", probs.strings()).
				Msg("an event log without an application start: it is not listed")
		}
		if err == nil {
			endIfCut(&sum, sum.ended, in)
		}
		if sum.started && sum.start.AppID != "" {
			// The listing looks for the start in the log's first lines
			// only; Spark writes its environment, a long classpath
			// included, ahead of it.
			in.AppID, in.AttemptID = sum.start.AppID, sum.start.AttemptID
		}
		p.mu.Lock()
		a.info, a.sumLog, a.sum, a.problems = in, sumLog, sum, probs
		p.mu.Unlock()
	}
	p.mu.Lock()
	for key, a := range p.logs {
		if !seen[key] {
			delete(p.logs, key)
			p.lru = slices.DeleteFunc(p.lru, func(b *application) bool { return b == a })
		}
	}
	p.mu.Unlock()
	return nil
}

// Applications implements webui.HistorySource: the applications of the
// folder, the most recently started first. Of several logs of one
// application (a rerun beside a log left behind), the list shows the one
// written last.
func (p *Provider) Applications() []webui.HistoryApp {
	p.mu.Lock()
	byID := make(map[string]*application, len(p.logs))
	for _, a := range p.logs {
		if !a.started() {
			continue
		}
		if b := byID[a.info.AppID]; b == nil || newer(a, b) {
			byID[a.info.AppID] = a
		}
	}
	out := make([]webui.HistoryApp, 0, len(byID))
	for _, a := range byID {
		out = append(out, a.listed())
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(x, y webui.HistoryApp) int {
		if c := y.Start.Compare(x.Start); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out
}

// newer reports whether the log of a was written after that of b, of two
// logs of one application: the later modification time, and of two with
// the same (logs copied with their times, or a file system that keeps whole
// seconds), the later path, so that the list and the pages agree.
func newer(a, b *application) bool {
	if c := a.info.ModTime.Compare(b.info.ModTime); c != 0 {
		return c > 0
	}
	return a.info.Path > b.info.Path
}

// find returns the log of application id that the list shows, nil when
// there is none.
func (p *Provider) find(id string) *application {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found *application
	for _, a := range p.logs {
		if a.info.AppID == id && a.started() && (found == nil || newer(a, found)) {
			found = a
		}
	}
	return found
}

// Store implements webui.HistorySource: application id's store, replayed
// from its log when it is not loaded, else brought up to date with what
// its log gained since the folder was last read. Before a replay, the
// least recently viewed stores beyond Config.RetainedApplications are
// dropped; at most maxReplays run at once.
func (p *Provider) Store(id string) (*webui.AppStore, []string, error) {
	a := p.find(id)
	if a == nil {
		return nil, nil, fmt.Errorf("%w: %q", ErrNoSuchApplication, id)
	}
	p.makeRoom(a)
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	p.mu.Lock()
	info := a.info
	p.mu.Unlock()
	if a.store == nil || logKey(a.loaded) != logKey(info) || rewritten(a.loaded, info) {
		a.store, a.storeLog, a.storeErr, a.loaded = webui.NewAppStore(), eventlog.Open(info.Path), problems{}, eventlog.Info{}
	}
	var err error
	if a.loaded.Path == "" || changed(a.loaded, info) {
		p.replays <- struct{}{}
		var r eventlog.Result
		r, err = readSafely(a.storeLog, a.store)
		if r.Restarted { // replaced: replay the new log alone
			a.store, a.storeLog, a.storeErr = webui.NewAppStore(), eventlog.Open(info.Path), problems{}
			r, err = readSafely(a.storeLog, a.store)
		}
		<-p.replays
		a.storeErr.add(r, nil)
		if err == nil {
			a.loaded = info
		}
		if err == nil {
			endIfCut(a.store, a.store.Completed(), info)
		}
	}
	p.touch(a)
	return a.store, a.storeErr.strings(), err
}

// makeRoom drops the stores of the least recently viewed applications
// other than a until a's is one of Config.RetainedApplications at most.
// It holds no store's lock while it takes another's.
func (p *Provider) makeRoom(a *application) {
	p.mu.Lock()
	var evict []*application
	others := slices.DeleteFunc(slices.Clone(p.lru), func(b *application) bool { return b == a })
	for len(others) >= p.cfg.RetainedApplications {
		evict = append(evict, others[0])
		others = others[1:]
	}
	p.lru = slices.DeleteFunc(p.lru, func(b *application) bool { return slices.Contains(evict, b) })
	p.mu.Unlock()
	for _, b := range evict {
		b.storeMu.Lock()
		b.store, b.storeLog, b.loaded, b.storeErr = nil, nil, eventlog.Info{}, problems{}
		b.storeMu.Unlock()
	}
}

// touch makes a the most recently viewed loaded application.
func (p *Provider) touch(a *application) {
	p.mu.Lock()
	p.lru = append(slices.DeleteFunc(p.lru, func(b *application) bool { return b == a }), a)
	p.mu.Unlock()
}
