package webui

// This file holds Server: an HTTP server bound with Spark's port retries
// (Utils.startServiceOnPort), served until Shutdown.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/net/netutil"
)

// What one client may hold of a web UI, authenticated or not: a
// connection has readHeaderTimeout to send a request's headers and
// readTimeout for the whole request, writeTimeout from the end of its
// headers until its response is written (so that a client that stops
// reading does not hold the connection), and is closed after idleTimeout
// without one; at most maxConnections are open at once (more wait to be
// accepted), so that clients cannot take the file descriptors the daemon
// that serves the UI needs for its RPC connections.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = 2 * time.Minute
	idleTimeout       = 2 * time.Minute
	maxConnections    = 256
)

// Server is a running web UI: an http.Server on its own listener.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	url  string
	done chan struct{}
	once sync.Once
	err  error
}

// Start binds handler on host:port and serves it until Shutdown. A port in
// use is retried on port+1, port+2, ... up to maxRetries times (Spark's
// spark.port.maxRetries), each move logged at warn level; port 0 picks a
// free port. advertise is the host put in URL (empty: host, or the
// machine's name when host is a wildcard address). name names the service
// in the logs ("SparkUI"). The error wraps ErrPortInUse when every port
// tried was taken.
func Start(name string, handler http.Handler, host, advertise string, port, maxRetries int, log zerolog.Logger) (*Server, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("%w: %s port %d is not between 0 and 65535", ErrInvalidConfig, name, port)
	}
	if maxRetries < 0 {
		return nil, fmt.Errorf("%w: %s must be at least 0, not %d", ErrInvalidConfig, KeyPortMaxRetries, maxRetries)
	}
	if port == 0 {
		maxRetries = 0
	}
	var ln net.Listener
	for i := 0; ; i++ {
		p := port + i
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("webui: %s cannot listen on %s: %w", name, net.JoinHostPort(host, strconv.Itoa(p)), err)
		}
		if i >= maxRetries || p >= 65535 {
			return nil, fmt.Errorf("%w: %s on %s: ports %d to %d are in use (%s=%d)", ErrPortInUse, name, host, port, p, KeyPortMaxRetries, maxRetries)
		}
		log.Warn().Msgf("Service '%s' could not bind on port %d. Attempting port %d.", name, p, p+1)
	}
	bound := ln.Addr().(*net.TCPAddr).Port
	if advertise == "" {
		advertise = host
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			advertise = "localhost"
		}
	}
	s := &Server{
		srv: &http.Server{Handler: handler, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
			WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, ErrorLog: nil},
		ln:   netutil.LimitListener(ln, maxConnections),
		url:  "http://" + net.JoinHostPort(advertise, strconv.Itoa(bound)),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Str("service", name).Msg("web UI stopped serving")
		}
	}()
	log.Info().Str("service", name).Str("url", s.url).Msgf("Successfully started service '%s' on port %d.", name, bound)
	return s, nil
}

// URL returns the server's address as others reach it: "http://host:port".
func (s *Server) URL() string { return s.url }

// Port returns the port the server listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Shutdown stops accepting connections and waits for the requests being
// served to end, or for ctx to end (then it closes the connections).
// Calling it again returns the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
			s.err = err
		}
		<-s.done
	})
	return s.err
}
