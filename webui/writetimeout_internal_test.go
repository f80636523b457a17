package webui

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A client that sends a request and then reads nothing does not hold a UI
// connection for ever: the server bounds the writing of a response as it
// bounds the reading of a request and idling. Before, no write deadline was
// set, so the handler stayed blocked writing to such a client until the UI
// shut down (seen holding it past 3 minutes, beyond readTimeout and
// idleTimeout), and maxConnections such clients, each sending one request
// for a page larger than the socket buffers (or pipelining small ones),
// locked every other user out of the UI; with spark.authenticate off, any
// peer that reaches the port can.
func TestAClientThatReadsNothingDoesNotHoldItsConnection(t *testing.T) {
	s, err := Start("test UI", http.NotFoundHandler(), "127.0.0.1", "", 0, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if d := s.srv.WriteTimeout; d <= 0 || d > 5*time.Minute {
		t.Fatalf("the writing of a response is not bounded (WriteTimeout %v): a client that reads nothing holds its connection "+
			"until the UI stops (ReadTimeout %v, IdleTimeout %v do not end it)", d, s.srv.ReadTimeout, s.srv.IdleTimeout)
	}
}
