package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/webui"
)

// checkDaemonPorts checks a daemon's --port and --webui-port (-1: no web
// UI).
func checkDaemonPorts(port, uiPort int) error {
	if port < 0 || port > 65535 {
		return cli.Usagef("--port must be between 0 and 65535")
	}
	if uiPort < -1 || uiPort > 65535 {
		return cli.Usagef("--webui-port must be between 0 and 65535, or -1 for no web UI")
	}
	return nil
}

// startDaemonUI serves a daemon's web UI h on bind (the daemon's bind
// address) from port up, moving up as spark.port.maxRetries allows; a
// negative port serves none (nil). It prints "NAME web UI at URL" to out.
// When spark.authenticate is on, the pages require the shared secret.
// extra options (e.g. webui.WithMetrics) are passed to newUI.
func startDaemonUI(name string, newUI func(opts ...webui.Option) http.Handler, conf *actor.Conf, bind, advertise string, port int,
	out io.Writer, log zerolog.Logger, extra ...webui.Option) (*webui.Server, error) {
	if port < 0 {
		return nil, nil
	}
	retries, err := webui.MaxRetries(conf)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	secret, err := webui.SecretFromConf(conf)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	opts := append([]webui.Option{webui.WithSecret(secret), webui.WithLogger(log)}, extra...)
	srv, err := webui.Start(name+" web UI", newUI(opts...), bind, advertise, port, retries, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s web UI at %s\n", name, srv.URL())
	return srv, nil
}

// stopDaemonUI stops a UI that startDaemonUI started (nil: none).
func stopDaemonUI(srv *webui.Server) {
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}
