package webui

// This file holds the endpoints page's data: each endpoint's mailbox depth
// and its message rate, computed between two snapshots of its counter.

import (
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// minRateWindow is the shortest interval a message rate is computed over;
// views closer together show the rate of the last window.
const minRateWindow = 500 * time.Millisecond

// endpointRow is one endpoint on the endpoints page.
type endpointRow struct {
	actor.EndpointStats
	Rate float64 // messages per second over the last window; -1 before the first window
}

// endpointsView is the endpoints page's data.
type endpointsView struct {
	Env, Address string
	Dropped      uint64
	Endpoints    []endpointRow
}

// rateSampler turns message counters into rates: it keeps the previous
// sample and the rates of the last complete window.
type rateSampler struct {
	mu    sync.Mutex
	at    time.Time
	prev  map[string]uint64
	rates map[string]float64
}

func newRateSampler() *rateSampler { return &rateSampler{} }

func (s *rateSampler) sample(stats []actor.EndpointStats, now time.Time) []endpointRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev == nil || now.Sub(s.at) >= minRateWindow {
		if s.prev != nil {
			dt := now.Sub(s.at).Seconds()
			s.rates = make(map[string]float64, len(stats))
			for _, st := range stats {
				if old, ok := s.prev[st.Name]; ok && st.Received >= old {
					s.rates[st.Name] = float64(st.Received-old) / dt
				}
			}
		}
		s.prev = make(map[string]uint64, len(stats))
		for _, st := range stats {
			s.prev[st.Name] = st.Received
		}
		s.at = now
	}
	out := make([]endpointRow, len(stats))
	for i, st := range stats {
		r, ok := s.rates[st.Name]
		if !ok {
			r = -1
		}
		out[i] = endpointRow{EndpointStats: st, Rate: r}
	}
	return out
}
