package history

// This file holds application, one log of the folder: what the list shows
// of it, and its store while it is loaded.

import (
	"fmt"
	"strings"
	"sync"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/webui"
)

// application is one log of the folder.
type application struct {
	// Under Provider.mu: what the list shows, as of the last reading.
	info     eventlog.Info
	sum      summary
	problems problems
	// sumLog reads the log for the list; only Refresh (one at a time)
	// uses it, outside Provider.mu.
	sumLog *eventlog.Log

	// storeMu is held while the store is replayed or brought up to date,
	// so that readers of the list never wait for a replay.
	storeMu  sync.Mutex
	store    *webui.AppStore
	storeLog *eventlog.Log
	loaded   eventlog.Info // the log as the store last read it
	storeErr problems      // of storeLog's readings
}

// listed is what the list shows of a; Provider.mu is held.
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

// started reports whether a's log has its application's start: a log
// without one (empty, or damaged from its start) has nothing to show, and
// is neither listed nor found. Provider.mu is held.
func (a *application) started() bool { return !a.sum.start.Time.IsZero() }

// endIfCut gives l, which has read the log in, the end that log lacks when
// it is finished: as Spark's, a log whose file has lost ".inprogress" is
// complete, and one without its ApplicationEnd was cut short and ended
// when it was last written. ended says whether l has read an end.
func endIfCut(l endpoints.Listener, ended bool, in eventlog.Info) {
	if !ended && !in.InProgress {
		l.OnEvent(endpoints.ApplicationEnd{Time: in.ModTime})
	}
}

// logKey names a log whatever its state: a log's file loses its
// ".inprogress" when its application ends.
func logKey(in eventlog.Info) string { return strings.TrimSuffix(in.Path, inProgress) }

// inProgress is the suffix of a log being written.
const inProgress = ".inprogress"

// changed reports whether the log b has grown or changed since a.
func changed(a, b eventlog.Info) bool {
	return logKey(a) != logKey(b) || a.Size != b.Size || !a.ModTime.Equal(b.ModTime) || a.InProgress != b.InProgress
}

// rewritten reports whether a finished log has changed since it was read
// as last: a finished log does not grow, so it was still being copied in
// (what was read of it may end in a line cut short, or a compressed
// stream cut short) or was written again. It is read again from its start.
func rewritten(last, now eventlog.Info) bool {
	return last.Path != "" && !last.InProgress && changed(last, now)
}

// readSafely brings l up to date from lg; a panic of the listener (a log
// that no store expected) is a failed reading, not a dead server.
func readSafely(lg *eventlog.Log, l endpoints.Listener) (r eventlog.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("history: reading the log stopped: %v", v)
		}
	}()
	return lg.Update(l)
}
