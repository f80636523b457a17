package webui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/webui"
)

// fixedAllocation is an AllocationSource with a set status.
type fixedAllocation endpoints.AllocationStatus

func (f fixedAllocation) Status() endpoints.AllocationStatus { return endpoints.AllocationStatus(f) }

// The executors page shows dynamic allocation's numbers and decisions, and
// the REST API serves them; without a source, the page says it is off.
func TestDriverUIShowsDynamicAllocation(t *testing.T) {
	c := startCluster(t, 1, 1)
	off := newDriverUI(t, c)
	if code, body := get(t, off+"/executors/", ""); code != http.StatusOK || !strings.Contains(body, "Off (spark.dynamicAllocation.enabled") {
		t.Fatalf("without allocation: %d\n%s", code, body)
	}
	now := time.Now()
	st := fixedAllocation{Config: endpoints.AllocationConfig{Enabled: true, MaxExecutors: 4, IdleTimeout: 2 * time.Second}, Target: 3,
		Pending: 197, Running: 3, Executors: 3, Idle: 0, Time: now,
		Decisions: []endpoints.AllocationDecision{
			{Time: now, Kind: endpoints.DecisionRemove, From: 0, To: 0, Executors: 2, Idle: 2, Removed: []string{"7", "9"}},
			{Time: now, Kind: endpoints.DecisionAdd, From: 1, To: 3, Pending: 197, Running: 3, Executors: 3},
		}}
	base := newDriverUI(t, c, webui.WithExecutorAllocation(st))
	code, body := get(t, base+"/executors/", "")
	for _, want := range []string{`<span id="allocation-target">3</span>`, `<span id="allocation-backlog">197</span>`,
		`data-decision="add"`, `1 → 3`, `7, 9`, "0 / 4"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("page (%d) lacks %q:\n%s", code, want, body)
		}
	}
	var got struct {
		Enabled   bool `json:"enabled"`
		Target    int  `json:"target"`
		Backlog   int  `json:"backlog"`
		Decisions []struct {
			Decision string   `json:"decision"`
			Target   int      `json:"target"`
			Removed  []string `json:"removed"`
			Message  string   `json:"message"`
		} `json:"decisions"`
	}
	getJSON(t, base+"/api/v1/applications/"+testApp+"/allocation", &got)
	if !got.Enabled || got.Target != 3 || got.Backlog != 197 || len(got.Decisions) != 2 || got.Decisions[1].Decision != "add" ||
		!strings.Contains(got.Decisions[1].Message, "target 1 -> 3") || len(got.Decisions[0].Removed) != 2 {
		t.Fatalf("allocation API: %+v", got)
	}
}
