// This file holds the application's event log (package eventlog) beside
// its driver, and the application's own events the runner posts.

package driverrun

import (
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/webui"
)

// eventLogCloseTimeout bounds the wait for the event log's last writes
// once the driver has stopped.
const eventLogCloseTimeout = 10 * time.Second

// appEvents are the application's own events, posted on its driver's
// bus for every listener (the UI's store among them), and its event log
// when spark.eventLog.enabled.
type appEvents struct {
	w       *eventlog.Writer // nil: no log
	log     zerolog.Logger
	logURLs map[string]string // the driver's, for ApplicationStart
	started bool              // ApplicationStart was posted
}

// newAppEvents returns the application's events, with its event log as
// conf says; a key that does not parse is an error naming it.
func newAppEvents(conf *actor.Conf, logURLs map[string]string, log zerolog.Logger) (*appEvents, error) {
	a := &appEvents{log: log, logURLs: logURLs}
	on, cfg, err := eventlog.ConfigFrom(conf)
	if err != nil {
		return nil, err
	}
	if on {
		a.w = eventlog.NewWriter(cfg, eventlog.WithLogger(log))
	}
	return a, nil
}

// driverOptions returns the option that makes the log one of the
// driver's listeners, so that it sees every event from the first.
func (a *appEvents) driverOptions() []endpoints.DriverOption {
	if a == nil || a.w == nil {
		return nil
	}
	return []endpoints.DriverOption{endpoints.WithListener(a.w)}
}

// start creates the log of application appID, when there is one, and
// posts the application's ApplicationStart and EnvironmentUpdate on d's
// bus. A log that cannot be created is the application's error.
func (a *appEvents) start(d *endpoints.Driver, appID string, began time.Time) error {
	if a == nil || a.started {
		return nil
	}
	conf := d.Env().Conf()
	if appID == "" {
		appID = conf.Get("spark.app.id", "app-"+began.UTC().Format("20060102150405"))
	}
	if a.w != nil {
		if err := a.w.Start(appID, ""); err != nil {
			return fmt.Errorf("event log (%s): %w", eventlog.KeyEnabled, err)
		}
	}
	a.started = true
	d.PostEvent(endpoints.ApplicationStart{Time: began, AppID: appID, AppName: conf.Get(cluster.KeyAppName, appID),
		User: cluster.CurrentUser(), Version: version(), DriverHostPort: d.Env().Address().HostPort(),
		DriverLogURLs: maps.Clone(a.logURLs)})
	// The secret, wherever it came from (spark.authenticate.secret.file
	// too), is hidden in every value.
	secret, _ := webui.SecretFromConf(conf)
	env, err := webui.NewEnvironmentUpdate(conf, secret, version(), time.Now())
	if err != nil {
		a.log.Warn().Err(err).Msg("the application's environment has every value redacted")
	}
	d.PostEvent(env)
	return nil
}

// end posts the application's ApplicationEnd, with appErr's text, on d's
// bus, before d stops.
func (a *appEvents) end(d *endpoints.Driver, appErr error) {
	if a == nil || !a.started || d == nil {
		return
	}
	ev := endpoints.ApplicationEnd{Time: time.Now()}
	if appErr != nil {
		ev.Error = appErr.Error()
	}
	d.PostEvent(ev)
}

// close writes what is left of the log and marks it finished, once the
// driver's bus has delivered its last events; it waits at most
// eventLogCloseTimeout.
func (a *appEvents) close() {
	if a == nil || a.w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventLogCloseTimeout)
	defer cancel()
	if err := a.w.Close(ctx); err != nil {
		a.log.Warn().Err(err).Msg("closing the event log")
	}
	if n := a.w.Dropped(); n > 0 {
		a.log.Warn().Int64("dropped", n).Msg("the event log misses events it dropped")
	}
}

// version returns the version of the sparkrpc module this program was
// built with (of its own tree: the pseudo-version Go stamps from the
// commit, or "(devel)" without version control information).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	const module = "github.com/sparkrpc/sparkrpc"
	if info.Main.Path == module {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == module {
			return d.Version
		}
	}
	return "(unknown)"
}
