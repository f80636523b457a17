package webui

// This file holds the driver UI's live message-flow page (/flow/, a
// sparkrpc addition beside Spark's pages) and its JSON twin
// (/api/v1/flow): the driver's env drawn as a graph, its endpoints on the
// left with their mailbox depth and message rate, the envs its transport
// talks to (executors, the cluster manager) on the right with the bytes
// each way per second and the bytes queued for them. The SVG is drawn on
// the server; the page refreshes itself as the others do.

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// Flow page bounds: at most this many endpoints and peers are drawn, the
// rest aggregated into one "others" node each, so a page stays small with
// many executors.
const (
	MaxFlowEndpoints = 16
	MaxFlowPeers     = 16
)

// FlowEndpoint is one of the driver env's endpoints on the flow page.
type FlowEndpoint struct {
	Name     string  `json:"name"`
	Queued   int     `json:"mailboxDepth"`
	Received uint64  `json:"messagesHandled"`
	Rate     float64 `json:"messagesPerSecond"` // -1 before the first window
	Count    int     `json:"count"`             // endpoints it stands for (1, or the aggregated rest)
}

// FlowPeer is a peer env of the driver's transport on the flow page.
type FlowPeer struct {
	Identity      string  `json:"identity"`
	ExecutorID    string  `json:"executorId,omitempty"`
	Client        bool    `json:"clientMode"`
	SentBytes     uint64  `json:"sentBytes"`
	ReceivedBytes uint64  `json:"receivedBytes"`
	QueuedBytes   int     `json:"queuedBytes"`
	SendRate      float64 `json:"sentBytesPerSecond"`     // -1 before the first window
	ReceiveRate   float64 `json:"receivedBytesPerSecond"` // -1 before the first window
	Count         int     `json:"count"`                  // peers it stands for (1, or the aggregated rest)
}

// Flow is the flow page's data, and /api/v1/flow's answer.
type Flow struct {
	Env       string         `json:"env"`
	Address   string         `json:"address"`
	Dropped   uint64         `json:"messagesDropped"`
	Endpoints []FlowEndpoint `json:"endpoints"`
	Peers     []FlowPeer     `json:"peers"`
}

// flowSource computes the flow from the driver's env: a snapshot of its
// endpoints' and peers' counters, rates between two snapshots at least
// minRateWindow apart.
type flowSource struct {
	d     *endpoints.Driver
	rates *rateSampler
	mu    sync.Mutex
	at    time.Time
	prev  map[string][2]uint64
	sendR map[string]float64
	recvR map[string]float64
}

func newFlowSource(d *endpoints.Driver) *flowSource {
	return &flowSource{d: d, rates: newRateSampler()}
}

// routes adds the flow page and its JSON route to mux.
func (f *flowSource) routes(mux *http.ServeMux, o *options, nav func(string) []navLink, heading func() string) {
	mux.HandleFunc("GET /flow/{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, r, "flow", page{Title: "Message flow", Heading: heading(), Nav: nav("/flow/"), Data: drawFlow(f.flow(time.Now()))},
			o.beforeSend)
	})
	mux.HandleFunc("GET /api/v1/flow", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, f.flow(time.Now())) })
}

// flow returns the current flow, bounded by MaxFlowEndpoints and
// MaxFlowPeers.
func (f *flowSource) flow(now time.Time) Flow {
	env := f.d.Env()
	fl := Flow{Env: env.Name(), Address: env.Address().String(), Dropped: env.Dropped()}
	for _, row := range f.rates.sample(env.EndpointStats(), now) {
		fl.Endpoints = append(fl.Endpoints, FlowEndpoint{Name: row.Name, Queued: row.Queued, Received: row.Received, Rate: row.Rate, Count: 1})
	}
	fl.Endpoints = boundEndpoints(fl.Endpoints)
	execs := map[string]string{}
	for _, ex := range f.d.Executors() {
		execs[ex.Identity] = ex.ID
	}
	for _, p := range f.peerRates(env.PeerStats(), now) {
		p.ExecutorID = execs[p.Identity]
		fl.Peers = append(fl.Peers, p)
	}
	fl.Peers = boundPeers(fl.Peers)
	if fl.Endpoints == nil {
		fl.Endpoints = []FlowEndpoint{}
	}
	if fl.Peers == nil {
		fl.Peers = []FlowPeer{}
	}
	return fl
}

// peerRates turns the peers' byte counters into rates.
func (f *flowSource) peerRates(stats []actor.PeerStats, now time.Time) []FlowPeer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prev == nil || now.Sub(f.at) >= minRateWindow {
		if f.prev != nil {
			dt := now.Sub(f.at).Seconds()
			f.sendR, f.recvR = map[string]float64{}, map[string]float64{}
			for _, s := range stats {
				if old, ok := f.prev[s.Identity]; ok && s.SentBytes >= old[0] && s.ReceivedBytes >= old[1] {
					f.sendR[s.Identity] = float64(s.SentBytes-old[0]) / dt
					f.recvR[s.Identity] = float64(s.ReceivedBytes-old[1]) / dt
				}
			}
		}
		f.prev = make(map[string][2]uint64, len(stats))
		for _, s := range stats {
			f.prev[s.Identity] = [2]uint64{s.SentBytes, s.ReceivedBytes}
		}
		f.at = now
	}
	out := make([]FlowPeer, len(stats))
	for i, s := range stats {
		sr, ok := f.sendR[s.Identity]
		rr := f.recvR[s.Identity]
		if !ok {
			sr, rr = -1, -1
		}
		out[i] = FlowPeer{Identity: s.Identity, Client: s.Client, SentBytes: s.SentBytes, ReceivedBytes: s.ReceivedBytes,
			QueuedBytes: s.QueuedBytes, SendRate: sr, ReceiveRate: rr, Count: 1}
	}
	return out
}

// boundEndpoints keeps the first MaxFlowEndpoints-1 endpoints and
// aggregates the rest into one.
func boundEndpoints(eps []FlowEndpoint) []FlowEndpoint {
	if len(eps) <= MaxFlowEndpoints {
		return eps
	}
	rest := FlowEndpoint{Rate: 0}
	for _, e := range eps[MaxFlowEndpoints-1:] {
		rest.Queued += e.Queued
		rest.Received += e.Received
		rest.Rate += max(0, e.Rate)
		rest.Count++
	}
	rest.Name = fmt.Sprintf("%d other endpoints", rest.Count)
	return append(eps[:MaxFlowEndpoints-1:MaxFlowEndpoints-1], rest)
}

// boundPeers keeps the first MaxFlowPeers-1 peers and aggregates the rest
// into one.
func boundPeers(ps []FlowPeer) []FlowPeer {
	if len(ps) <= MaxFlowPeers {
		return ps
	}
	rest := FlowPeer{}
	for _, p := range ps[MaxFlowPeers-1:] {
		rest.SentBytes += p.SentBytes
		rest.ReceivedBytes += p.ReceivedBytes
		rest.QueuedBytes += p.QueuedBytes
		rest.SendRate += max(0, p.SendRate)
		rest.ReceiveRate += max(0, p.ReceiveRate)
		rest.Count++
	}
	rest.Identity = fmt.Sprintf("%d other peers", rest.Count)
	return append(ps[:MaxFlowPeers-1:MaxFlowPeers-1], rest)
}
