package webui_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/webui"
)

func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
}

// busyPorts holds n consecutive ports taken on 127.0.0.1 and returns the
// first; it retries until it finds a free run.
func busyPorts(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns := []net.Listener{first}
		port := first.Addr().(*net.TCPAddr).Port
		ok := port+n < 65535
		for i := 1; ok && i < n; i++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+i))
			if err != nil {
				ok = false
				break
			}
			lns = append(lns, ln)
		}
		if ok {
			t.Cleanup(func() {
				for _, ln := range lns {
					ln.Close()
				}
			})
			return port
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	t.Fatal("no run of free ports")
	return 0
}

func shutdownServer(t *testing.T, s *webui.Server) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
}

// A busy port moves the server up, each move logged; past
// spark.port.maxRetries it is a typed error naming the key.
func TestStartMovesUpOnBusyPort(t *testing.T) {
	port := busyPorts(t, 2)
	var logs testutil.SyncBuffer
	log := zerolog.New(&logs)
	s, err := webui.Start("SparkUI", okHandler(), "127.0.0.1", "", port, 16, log)
	if err != nil {
		t.Fatal(err)
	}
	shutdownServer(t, s)
	if s.Port() <= port+1 || s.Port() > port+16 {
		t.Fatalf("bound %d; want above the busy %d and %d, within 16 retries", s.Port(), port, port+1)
	}
	for _, want := range []string{fmt.Sprintf("could not bind on port %d. Attempting port %d.", port, port+1),
		fmt.Sprintf("Successfully started service 'SparkUI' on port %d.", s.Port())} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("logs lack %q:\n%s", want, logs.String())
		}
	}
	if want := fmt.Sprintf("http://127.0.0.1:%d", s.Port()); s.URL() != want {
		t.Fatalf("URL = %q, want %q", s.URL(), want)
	}
	if code, body := get(t, s.URL()+"/", ""); code != http.StatusOK || body != "ok" {
		t.Fatalf("GET = %d %q", code, body)
	}

	_, err = webui.Start("SparkUI", okHandler(), "127.0.0.1", "", port, 1, zerolog.Nop())
	if !errors.Is(err, webui.ErrPortInUse) || !strings.Contains(err.Error(), webui.KeyPortMaxRetries+"=1") {
		t.Fatalf("Start with 1 retry on 2 busy ports = %v; want ErrPortInUse naming %s", err, webui.KeyPortMaxRetries)
	}
}

func TestStartBadPorts(t *testing.T) {
	for _, tc := range []struct{ port, retries int }{{-1, 0}, {65536, 0}, {0, -1}} {
		if _, err := webui.Start("x", okHandler(), "127.0.0.1", "", tc.port, tc.retries, zerolog.Nop()); !errors.Is(err, webui.ErrInvalidConfig) {
			t.Fatalf("Start(port %d, retries %d) = %v; want ErrInvalidConfig", tc.port, tc.retries, err)
		}
	}
}

// A wildcard bind host advertises localhost.
func TestStartWildcardAdvertisesLocalhost(t *testing.T) {
	s, err := webui.Start("x", okHandler(), "0.0.0.0", "", 0, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	shutdownServer(t, s)
	if !strings.HasPrefix(s.URL(), "http://localhost:") {
		t.Fatalf("URL = %q", s.URL())
	}
}
