package netty_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/netty"
)

// A taken port moves the listener to the next one, and the move is logged
// (README: "port+1 tries on a busy port (each logged)"): a driver asked for
// port P that silently listens on P+1 leaves its operator guessing why
// executors pointed at P reach something else. Before, nothing was logged.
func TestPortMoveIsLogged(t *testing.T) {
	first := newEnv(t, "first", nil)
	taken := first.Address().Port
	var buf syncBuffer
	second := newEnv(t, "second", nil, netty.WithPort(taken), netty.WithLogger(zerolog.New(&buf)))
	if second.Address().Port == taken {
		t.Fatalf("second env on the taken port %d", taken)
	}
	if !strings.Contains(buf.String(), "port "+strconv.Itoa(taken)) || !strings.Contains(buf.String(), netty.KeyPortMaxRetries) {
		t.Fatalf("the move from port %d to %d was not logged; log:\n%s", taken, second.Address().Port, buf.String())
	}
}
