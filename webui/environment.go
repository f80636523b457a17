package webui

// This file holds an application's environment page and its REST API
// (Spark's /environment/ and /api/v1/applications/{id}/environment): the
// runtime and the configuration, sensitive values redacted, from the
// store's EnvironmentUpdate; before one arrives, the live UI redacts the
// driver's configuration itself.

import (
	"maps"
	"net/http"
	"runtime"
	"slices"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// Keys of EnvironmentUpdate.Runtime that the environment API reads.
const (
	RuntimeGoVersion = "Go Version"
	RuntimePlatform  = "Platform"
	RuntimeVersion   = "sparkrpc Version"
)

// NewEnvironmentUpdate returns the EnvironmentUpdate of a driver whose
// configuration is conf, running version: the properties redacted as the
// UI redacts them (spark.redaction.regex, the secret's key and any value
// holding secret, every value when the regex does not compile, with the
// regex's error) and this process' runtime.
func NewEnvironmentUpdate(conf *actor.Conf, secret, version string, now time.Time) (endpoints.EnvironmentUpdate, error) {
	props, err := redactConf(conf, secret)
	return endpoints.EnvironmentUpdate{Time: now, Properties: props, Runtime: map[string]string{
		RuntimeGoVersion: runtime.Version(), RuntimePlatform: runtime.GOOS + "/" + runtime.GOARCH, RuntimeVersion: version,
	}}, err
}

// runtimeInfo is the runtime section of the environment: sparkrpc's
// counterpart of Spark's RuntimeInfo (Go for the JVM).
type runtimeInfo struct {
	GoVersion       string `json:"goVersion"`
	Platform        string `json:"platform"`
	SparkrpcVersion string `json:"sparkrpcVersion"`
}

// applicationEnvironmentInfo is the subset of Spark's
// ApplicationEnvironmentInfo that sparkrpc has: the runtime and the Spark
// properties, as [key, value] pairs sorted by key, redacted.
type applicationEnvironmentInfo struct {
	Runtime         runtimeInfo `json:"runtime"`
	SparkProperties [][2]string `json:"sparkProperties"`
}

// environmentView is the environment page's data.
type environmentView struct {
	applicationEnvironmentInfo
	App         AppInfo
	ID          string
	RuntimeRows [][2]string // every entry of the runtime, by name
	Error       string      // a bad spark.redaction.regex: every value is redacted
	Pending     bool        // no EnvironmentUpdate and no live driver
}

// environment returns the store's environment; before an
// EnvironmentUpdate, the live driver's (redacted here) or, without one,
// an empty one (pending).
func (u *appUI) environment() (env applicationEnvironmentInfo, rows [][2]string, pending bool, err error) {
	app := u.store.Info()
	var ev endpoints.EnvironmentUpdate
	switch e := u.store.environment(); {
	case e != nil:
		ev = *e
	case u.live():
		ev, err = NewEnvironmentUpdate(u.d.Env().Conf(), u.o.secret, app.Version, time.Now())
	default:
		return applicationEnvironmentInfo{SparkProperties: [][2]string{}}, nil, true, nil
	}
	rt := runtimeInfo{GoVersion: ev.Runtime[RuntimeGoVersion], Platform: ev.Runtime[RuntimePlatform],
		SparkrpcVersion: ev.Runtime[RuntimeVersion]}
	if rt.SparkrpcVersion == "" {
		rt.SparkrpcVersion = app.Version
	}
	for _, k := range slices.Sorted(maps.Keys(ev.Runtime)) {
		rows = append(rows, [2]string{k, ev.Runtime[k]})
	}
	props := redactAgain(ev.Properties, u.o.redaction, u.o.secret)
	return applicationEnvironmentInfo{Runtime: rt, SparkProperties: props}, rows, false, err
}

func (u *appUI) environmentPage(w http.ResponseWriter, r *http.Request) {
	env, rows, pending, err := u.environment()
	v := environmentView{applicationEnvironmentInfo: env, App: u.store.Info(), ID: u.appID(), RuntimeRows: rows, Pending: pending}
	if err != nil {
		v.Error = err.Error()
	}
	render(w, r, "environment", page{Title: "Environment", Heading: u.heading(), Nav: u.nav("/environment/"), Notices: u.o.notices, Data: v}, u.o.beforeSend)
}

func (u *appUI) apiEnvironment(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	env, _, _, err := u.environment()
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, env)
}
