package webui

// This file holds the driver UI's environment page and its REST API
// (Spark's /environment/ and /api/v1/applications/{id}/environment): the
// runtime and the driver's configuration, sensitive values redacted.

import (
	"net/http"
	"runtime"
)

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
	App   AppInfo
	ID    string
	Error string // a bad spark.redaction.regex: every value is redacted
}

func (u *DriverUI) environment() (applicationEnvironmentInfo, error) {
	props, err := redactConf(u.d.Env().Conf(), u.o.secret)
	return applicationEnvironmentInfo{
		Runtime:         runtimeInfo{GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, SparkrpcVersion: u.app.Version},
		SparkProperties: props,
	}, err
}

func (u *DriverUI) environmentPage(w http.ResponseWriter, r *http.Request) {
	env, err := u.environment()
	v := environmentView{applicationEnvironmentInfo: env, App: u.app, ID: u.appID()}
	if err != nil {
		v.Error = err.Error()
	}
	render(w, r, "environment", page{Title: "Environment", Heading: u.heading(), Nav: u.nav("/environment/"), Data: v}, u.o.beforeSend)
}

func (u *DriverUI) apiEnvironment(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	env, err := u.environment()
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, env)
}
