package actor

import "testing"

// An env's own registry, with its Go runtime and process collectors, is
// made when first asked for: an env nobody scrapes (an executor's) does not
// pay for it. Its counters run from the start.
func TestOwnRegistryIsMadeWhenAskedFor(t *testing.T) {
	e, err := NewEnv("lazy-metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(t.Context()) //nolint:errcheck // the test's env
	if e.metrics != nil {
		t.Fatal("the env made its registry before anyone asked for it")
	}
	reg := e.Metrics()
	if reg == nil || e.Metrics() != reg {
		t.Fatalf("Metrics() = %p, then %p: want one registry", reg, e.Metrics())
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, n := range []string{"go_goroutines", "process_cpu_seconds_total", "sparkrpc_asks_total"} {
		if !names[n] {
			t.Errorf("no %s in the registry made on demand", n)
		}
	}
}
