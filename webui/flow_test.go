package webui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/webui"
)

type flowJSON struct {
	Env       string `json:"env"`
	Endpoints []struct {
		Name     string  `json:"name"`
		Received uint64  `json:"messagesHandled"`
		Rate     float64 `json:"messagesPerSecond"`
	} `json:"endpoints"`
	Peers []struct {
		Identity    string  `json:"identity"`
		Client      bool    `json:"clientMode"`
		Sent        uint64  `json:"sentBytes"`
		Received    uint64  `json:"receivedBytes"`
		ReceiveRate float64 `json:"receivedBytesPerSecond"`
		Count       int     `json:"count"`
		ExecutorID  string  `json:"executorId"`
	} `json:"peers"`
}

// With a driver and two executors in process, the flow route lists the
// driver's endpoints and its two executor peers with their traffic, and
// the page draws them as an SVG.
func TestDriverUIFlow(t *testing.T) {
	c := startCluster(t, 2, 1)
	base := newDriverUI(t, c)
	var f flowJSON
	// Executors heartbeat every 100ms: once a window passed, both peers
	// show bytes received per second, the heartbeat receiver a rate.
	testutil.Eventually(t, testTimeout, "two peers with traffic and rates", func() bool {
		getJSON(t, base+"/api/v1/flow", &f)
		if len(f.Peers) != 2 {
			return false
		}
		for _, p := range f.Peers {
			if !p.Client || p.Count != 1 || p.Sent == 0 || p.Received == 0 || p.ReceiveRate <= 0 || p.ExecutorID == "" {
				return false
			}
		}
		for _, e := range f.Endpoints {
			if e.Name == "HeartbeatReceiver" {
				return e.Received > 0 && e.Rate > 0
			}
		}
		return false
	})
	if f.Env != "sparkDriver" || f.Peers[0].ExecutorID == f.Peers[1].ExecutorID {
		t.Fatalf("flow = %+v", f)
	}
	code, page := get(t, base+"/flow/", "")
	for _, want := range []string{`<svg id="flow"`, `data-name="CoarseGrainedScheduler"`, `data-name="HeartbeatReceiver"`,
		`class="node peer"`, `data-name="executor ` + f.Peers[0].ExecutorID + ` · ` + f.Peers[0].Identity[:15] + `…"`, `href="/flow/" class="active"`, "B/s"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("/flow/ = %d, no %q:\n%s", code, want, page)
		}
	}
	if n := strings.Count(page, `class="node peer"`); n != 2 {
		t.Fatalf("%d peers drawn, want 2", n)
	}
}

// Many peers are drawn bounded: the first ones, then the rest as one node.
func TestFlowBounded(t *testing.T) {
	peers := make([]webui.FlowPeer, 100)
	for i := range peers {
		peers[i] = webui.FlowPeer{Identity: "client-" + string(rune('a'+i%26)), SentBytes: 10, Count: 1}
	}
	f := webui.BoundFlow(webui.Flow{Peers: peers})
	if len(f.Peers) != webui.MaxFlowPeers {
		t.Fatalf("%d peers, want %d", len(f.Peers), webui.MaxFlowPeers)
	}
	last := f.Peers[len(f.Peers)-1]
	if want := 100 - webui.MaxFlowPeers + 1; last.Count != want || last.SentBytes != uint64(10*want) ||
		last.Identity != "85 other peers" {
		t.Fatalf("the aggregate = %+v", last)
	}
}
