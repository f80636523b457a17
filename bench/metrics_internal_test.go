package bench

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// Metrics serves the metrics of the envs a run starts, labelled by env,
// with the runtime metrics once, and forgets an env once it has stopped.
func TestMetricsGathersRunningEnvs(t *testing.T) {
	m := NewMetrics()
	h := &harness{cfg: DefaultConfig(), metrics: m}
	a, err := newNetworkedEnv(h, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, stop, err := newLocalEnv(h)
	if err != nil {
		shutdownEnv(a)
		t.Fatal(err)
	}
	got := testutil.Scrape(t, m.Handler())
	if _, ok := got.Value("sparkrpc_connections_open", "env", "a-1"); !ok {
		t.Errorf("no connections_open of env a-1: %v", got.Names())
	}
	if _, ok := got.Value("sparkrpc_asks_total", "env", b.Name()+"-2"); !ok {
		t.Errorf("no asks_total of the local env")
	}
	if _, ok := got.Value("go_goroutines"); !ok {
		t.Error("no runtime metrics")
	}
	shutdownEnv(a)
	stop()
	got = testutil.Scrape(t, m.Handler())
	if v, ok := got.Value("sparkrpc_asks_total"); ok {
		t.Errorf("a stopped env still reports asks_total %v", v)
	}
}
