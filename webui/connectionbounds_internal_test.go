package webui

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/rs/zerolog"
)

// A client without the secret does not hold a UI connection: its 401
// closes the connection (the server reads the next byte as its end), and
// the server's timeouts bound a connection's reading and idling for
// everyone. Before, a 401 left the connection kept alive with no deadline,
// each holding a descriptor and a goroutine of the daemon.
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
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("status %d, close %v: want a 401 that closes the connection", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the 401, reading the connection: %v, want EOF (the server closed it)", err)
	}
	if s.srv.IdleTimeout <= 0 || s.srv.ReadTimeout <= 0 {
		t.Fatalf("a connection's idling and reading are not bounded (IdleTimeout %v, ReadTimeout %v, ReadHeaderTimeout %v)",
			s.srv.IdleTimeout, s.srv.ReadTimeout, s.srv.ReadHeaderTimeout)
	}
}
