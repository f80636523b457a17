package endpoints

// This file holds the record of the executors' last heartbeats that the
// driver's monitoring reads (LastHeartbeats).

import (
	"maps"
	"sync"
	"time"
)

// heartbeatTimes mirrors the HeartbeatReceiver's last-seen times for
// readers outside its endpoint (web pages); its lock is held only to copy.
type heartbeatTimes struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (h *heartbeatTimes) set(id string, t time.Time) {
	h.mu.Lock()
	if h.seen == nil {
		h.seen = make(map[string]time.Time)
	}
	h.seen[id] = t
	h.mu.Unlock()
}

func (h *heartbeatTimes) remove(id string) {
	h.mu.Lock()
	delete(h.seen, id)
	h.mu.Unlock()
}

// LastHeartbeats returns, per registered executor id, when the driver's
// HeartbeatReceiver last heard from it (its registration counts as the
// first heartbeat). It takes no lock the scheduler holds.
func (d *Driver) LastHeartbeats() map[string]time.Time {
	d.hbTimes.mu.Lock()
	defer d.hbTimes.mu.Unlock()
	return maps.Clone(d.hbTimes.seen)
}
