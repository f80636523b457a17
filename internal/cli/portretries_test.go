package cli_test

import (
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
)

// spark.port.maxRetries is read in one place: the transport, the web UIs
// and the daemons refuse a value that does not parse, or a negative one,
// with the same *actor.ConfError naming the key (a daemon's is a usage
// error too, a UI's ErrInvalidConfig too). Before, the UIs and the daemons
// each read it themselves, and said "-1" was wrong with errors of their
// own that no caller could tell by key.
func TestPortMaxRetriesReadInOnePlace(t *testing.T) {
	for _, v := range []string{"-1", "x"} {
		conf := actor.NewConf().Set(netty.KeyPortMaxRetries, v)
		checks := map[string]error{}
		_, checks["netty.PortMaxRetries"] = netty.PortMaxRetries(conf)
		_, err := webui.MaxRetries(conf)
		if !errors.Is(err, webui.ErrInvalidConfig) {
			t.Errorf("%s: webui.MaxRetries = %v; want ErrInvalidConfig", v, err)
		}
		checks["webui.MaxRetries"] = err
		_, _, err = cli.Listen(cluster.TCPNetwork{}, "daemon", conf, 0, zerolog.Nop())
		if ue := (*cli.UsageError)(nil); !errors.As(err, &ue) {
			t.Errorf("%s: cli.Listen = %v; want a usage error", v, err)
		}
		checks["cli.Listen"] = err
		for who, err := range checks {
			var ce *actor.ConfError
			if !errors.As(err, &ce) || ce.Key != netty.KeyPortMaxRetries || ce.Value != v {
				t.Errorf("%s=%s: %s = %v; want a *actor.ConfError naming the key and its value", netty.KeyPortMaxRetries, v, who, err)
			}
		}
	}
	if n, err := netty.PortMaxRetries(actor.NewConf()); n != 16 || err != nil {
		t.Errorf("default = %d, %v; want 16", n, err)
	}
}
