package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// RegisterExecutor is a peer's frame: an executor id that is empty, or a
// number of cores below 1, is refused with an error, not recorded. Before,
// a negative count lowered TotalCores (what dynamic allocation and the UI
// read) below what the real executors have.
func TestRegisterWithBadInputIsRefused(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	good := newFakeExecutor(t, nw, d.URL())
	if err := good.register("good", "h", 4); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id    string
		cores int
	}{{"neg", -1000}, {"zero", 0}, {"", 2}} {
		f := newFakeExecutor(t, nw, d.URL())
		if err := f.register(c.id, "h", c.cores); err == nil {
			t.Errorf("RegisterExecutor(id %q, cores %d) accepted", c.id, c.cores)
		}
	}
	if got := d.TotalCores(); got != 4 {
		t.Errorf("TotalCores = %d, want 4 (the one real executor's)", got)
	}
}
