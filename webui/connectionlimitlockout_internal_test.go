package webui

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// One client without the secret that opens maxConnections connections and
// sends a request on each does not lock other users out of the UI: each 401
// closes its connection. Before, each stayed open for the idle timeout (2
// minutes), and the UI's cap on connections left every other user waiting
// unaccepted in the listen backlog.
func TestUnauthenticatedClientCannotLockOthersOut(t *testing.T) {
	s, err := Start("test UI", requireSecret("s3cret", "", zerolog.Nop(), nil,
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })),
		"127.0.0.1", "", 0, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	addr := s.ln.Addr().String()
	for i := 0; i < maxConnections; i++ {
		c, err := net.Dial("tcp", addr)
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
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	}
	// Another user: any answer (a 401 here, as it has no secret either)
	// shows that the UI still serves others.
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("after one unauthenticated client opened %d idle connections, the UI serves nobody else: %v", maxConnections, err)
	}
	resp.Body.Close()
}
