package webui

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/rs/zerolog"
)

// A client without the secret, answered 401 on a connection kept alive,
// does not hold that connection for ever: the UI's server closes a
// connection that sends no request within its idle timeout, and bounds a
// request's reading. Before, it set ReadHeaderTimeout only, so such a
// connection waited for its next request with no deadline, each holding a
// descriptor and a goroutine of the daemon that serves the UI.
func TestUnauthenticatedIdleConnectionsAreNotHeldForever(t *testing.T) {
	s, err := Start("test UI", requireSecret("s3cret", "", zerolog.Nop(), nil, http.NotFoundHandler()),
		"127.0.0.1", "", 0, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	c, err := net.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("status %d, close %v: want a 401 on a connection kept alive", resp.StatusCode, resp.Close)
	}
	// The connection now waits for a next request: for how long?
	if s.srv.IdleTimeout <= 0 && s.srv.ReadTimeout <= 0 {
		t.Fatalf("an unauthenticated client's idle keep-alive connection is held with no deadline "+
			"(IdleTimeout %v, ReadTimeout %v, ReadHeaderTimeout %v) and without a bound on how many",
			s.srv.IdleTimeout, s.srv.ReadTimeout, s.srv.ReadHeaderTimeout)
	}
}
