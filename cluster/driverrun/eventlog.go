// This file holds the application's event log (package eventlog) beside
// its driver, and the application's own events the runner posts.

package driverrun

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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

// appEvents is the application's event log, when spark.eventLog.enabled,
// and the application's events posted on its driver's bus. A nil
// *appEvents is valid: no log.
type appEvents struct {
	w       *eventlog.Writer
	log     zerolog.Logger
	started bool // the log was created and ApplicationStart posted
}

// newAppEvents returns the application's event log as conf says (nil
// when it is off); a key that does not parse is an error naming it.
func newAppEvents(conf *actor.Conf, log zerolog.Logger) (*appEvents, error) {
	on, cfg, err := eventlog.ConfigFrom(conf)
	if err != nil || !on {
		return nil, err
	}
	return &appEvents{w: eventlog.NewWriter(cfg, eventlog.WithLogger(log)), log: log}, nil
}

// driverOptions returns the option that makes the log one of the
// driver's listeners, so that it sees every event from the first.
func (a *appEvents) driverOptions() []endpoints.DriverOption {
	if a == nil {
		return nil
	}
	return []endpoints.DriverOption{endpoints.WithListener(a.w)}
}

// start creates the log of application appID and posts the application's
// ApplicationStart and EnvironmentUpdate on d's bus. A log that cannot be
// created is the application's error.
func (a *appEvents) start(d *endpoints.Driver, appID string, began time.Time) error {
	if a == nil {
		return nil
	}
	conf := d.Env().Conf()
	if appID == "" {
		appID = conf.Get("spark.app.id", "app-"+began.UTC().Format("20060102150405"))
	}
	if err := a.w.Start(appID, ""); err != nil {
		return fmt.Errorf("event log (%s): %w", eventlog.KeyEnabled, err)
	}
	a.started = true
	d.PostEvent(endpoints.ApplicationStart{Time: began, AppID: appID, AppName: conf.Get(cluster.KeyAppName, appID),
		User: cluster.CurrentUser(), Version: version(), DriverHostPort: d.Env().Address().HostPort()})
	d.PostEvent(endpoints.EnvironmentUpdate{Time: time.Now(), Properties: redactedConf(conf, a.log), Runtime: map[string]string{
		"Go Version": runtime.Version(), "Platform": runtime.GOOS + "/" + runtime.GOARCH,
		"GOMAXPROCS": strconv.Itoa(runtime.GOMAXPROCS(0)), "sparkrpc Version": version()}})
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
	if a == nil {
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

// redactedConf returns conf's entries as the UI shows them: sorted, the
// values that spark.redaction.regex matches (by key or value), the
// authentication secret and any value holding it redacted. A regex that
// does not compile redacts every value, and is logged.
func redactedConf(conf *actor.Conf, log zerolog.Logger) [][2]string {
	re, err := webui.RedactionRegex(conf)
	if err != nil {
		log.Warn().Err(err).Msg("the event log's environment has every value redacted")
	}
	out := webui.Redact(re, conf.All())
	secret := conf.Get(webui.KeyAuthenticateSecret, "")
	for i, kv := range out {
		if kv[0] == webui.KeyAuthenticateSecret || secret != "" && strings.Contains(kv[1], secret) {
			out[i][1] = webui.RedactedText
		}
	}
	return out
}

// version returns the version of the sparkrpc module this program was
// built with ("(devel)" for a build of its own tree).
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
