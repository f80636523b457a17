package driverrun

// This file holds how the cluster's runners start the driver's web UI
// (package webui) beside the driver, and the tracking URL it gives.

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
)

// driverUI is the driver's running web UI; its zero value (no UI) is valid.
type driverUI struct {
	srv *webui.Server
}

// startUI starts d's UI as its conf says (spark.ui.enabled,
// spark.ui.port, spark.port.maxRetries, spark.authenticate), bound where
// the driver's env binds (net's bind host). A UI that cannot start is logged and the
// application runs without it: the UI is never a reason to fail a job.
// opts are passed to the UI (e.g. webui.WithMetrics).
func startUI(d *endpoints.Driver, net cluster.Network, appID string, logURLs map[string]string, log zerolog.Logger, opts ...webui.Option) *driverUI {
	env := d.Env()
	conf := env.Conf()
	host := env.Address().Host
	if tn, ok := net.(cluster.TCPNetwork); ok {
		host = tn.BindHost
		if host == "" {
			host = netty.DefaultBindHost
		}
	}
	app := webui.AppInfo{ID: appID, Name: conf.Get(cluster.KeyAppName, appID), User: cluster.CurrentUser(), Start: time.Now(),
		Version:        version(),
		DriverLogURLs:  logURLs,
		DriverHostPort: env.Address().HostPort()}
	srv, err := webui.StartDriverUI(d, app, host, env.Address().Host, log, opts...)
	if err != nil {
		log.Warn().Err(err).Msg("the Spark UI could not start; the application runs without it")
		return &driverUI{}
	}
	if srv == nil {
		return &driverUI{}
	}
	log.Info().Str("url", srv.URL()).Msgf("Bound SparkUI to %s, and started at %s", host, srv.URL())
	return &driverUI{srv: srv}
}

// URL returns the UI's address, "" when it does not run.
func (u *driverUI) URL() string {
	if u == nil || u.srv == nil {
		return ""
	}
	return u.srv.URL()
}

// Stop stops the UI, waiting at most 5s for the pages being served.
func (u *driverUI) Stop() {
	if u == nil || u.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = u.srv.Shutdown(ctx)
}
