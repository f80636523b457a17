package history

// This file holds summary, what the application list shows of one log,
// kept from the log's application events.

import (
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// summary is a Listener that keeps what the list of applications shows of
// one log: its ApplicationStart and ApplicationEnd, and when its last
// event happened.
type summary struct {
	start   endpoints.ApplicationStart
	end     endpoints.ApplicationEnd
	started bool
	ended   bool
	last    time.Time
}

// OnEvent implements endpoints.Listener.
func (s *summary) OnEvent(ev endpoints.Event) {
	switch e := ev.(type) {
	case endpoints.ApplicationStart:
		// The list keeps every log's summary: what it shows, clipped
		// (a line may hold 16 MiB), and nothing else.
		e.AppName = webui.ClipText(e.AppName, webui.MaxNameText)
		e.AppID, e.AttemptID = webui.ClipText(e.AppID, webui.MaxNameText), webui.ClipText(e.AttemptID, webui.MaxNameText)
		e.User, e.Version = webui.ClipText(e.User, webui.MaxNameText), webui.ClipText(e.Version, webui.MaxNameText)
		e.DriverHostPort, e.DriverLogURLs = "", nil
		s.start, s.started = e, true
	case endpoints.ApplicationEnd:
		e.Error = webui.ClipText(e.Error, webui.MaxErrorText)
		s.end, s.ended = e, true
	}
	if t := ev.When(); t.After(s.last) {
		s.last = t
	}
}
