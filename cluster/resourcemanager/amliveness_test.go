package resourcemanager

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// An application master that says nothing for the AM expiry after its
// container was launched, or after it last registered or asked for
// containers, fails its application, and all its containers, its own
// included, are stopped (YARN's AM liveness monitor). Before, an AM that
// hung, or never registered, left its application ACCEPTED or RUNNING, and
// its containers held, for ever.
func TestSilentApplicationMasterFailsItsApplication(t *testing.T) {
	c, clk := newTestCore(t, cluster.Resource{MemoryMB: 4096, Cores: 4})
	c.amExpiry = time.Minute
	never, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1}) // its AM never registers
	hung, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})  // its AM registers, asks once, then hangs
	live, _ := submitApp(t, c, cluster.Resource{MemoryMB: 512, Cores: 1})  // its AM keeps asking
	for _, id := range []string{hung, live} {
		if _, err := c.registerAM(&messages.AmRegister{AppId: id}); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(id string) {
		t.Helper()
		if _, _, err := c.allocateFor(&messages.AmAllocate{AppId: id, NumPending: 1, Resource: cluster.Resource{MemoryMB: 512, Cores: 1}.Proto()}); err != nil {
			t.Fatal(err)
		}
	}
	ask(hung)
	ask(live)
	clk.t = clk.t.Add(40 * time.Second)
	ask(live)
	if failed, acts := c.checkAMs(); len(failed) != 0 || len(acts) != 0 {
		t.Fatalf("within the expiry: failed %v, %d actions", failed, len(acts))
	}
	clk.t = clk.t.Add(30 * time.Second)
	failed, acts := c.checkAMs()
	if strings.Join(failed, ",") != never+","+hung {
		t.Fatalf("failed %v, want %s and %s", failed, never, hung)
	}
	stopped := map[string]int{}
	for _, a := range acts {
		if a.kind == actStopContainer {
			stopped[a.appID]++
		}
	}
	if stopped[never] != 1 || stopped[hung] != 1 || stopped[live] != 0 {
		t.Errorf("containers stopped per application: %v; want the AMs of %s and %s", stopped, never, hung)
	}
	for _, ct := range c.apps[hung].containers {
		if !ct.am {
			t.Errorf("%s still holds container %s", hung, ct.id)
		}
	}
	for _, id := range []string{never, hung} {
		a := c.apps[id]
		if a.state != cluster.StateFailed || a.final != cluster.FinalFailed || !strings.Contains(a.diagnostics, "sent nothing for 1m0s") {
			t.Errorf("%s: %s/%s %q; want FAILED naming the expiry", id, a.state, a.final, a.diagnostics)
		}
	}
	if a := c.apps[live]; a.state != cluster.StateRunning {
		t.Errorf("the live application is %s", a.state)
	}
}
