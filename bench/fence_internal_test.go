package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// A FIFO link that delivers the last message of the run twice: the
// duplicate arrives right behind the original, as a retransmission would.
// The link lets it go once something is queued behind it, or once the run
// has returned. The run waits for each sender's fence, which follows its
// last message, so the duplicate is counted and fails the verification.
// Before, the run stopped at a count of arrivals, and read the checkers
// before the duplicate arrived.
func TestRunOnewayDetectsADuplicateOfTheLastMessage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := &harness{cfg: QuickConfig()}
	h.cfg.StallTimeout = 5 * time.Second
	const count = 100
	sk := &sink{}
	type item struct {
		m   *messages.BenchPing
		dup bool
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var queue []item
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			mu.Lock()
			for len(queue) == 0 && !returned || len(queue) == 1 && queue[0].dup && !returned {
				cond.Wait()
			}
			if len(queue) == 0 {
				mu.Unlock()
				return
			}
			it := queue[0]
			queue = queue[1:]
			mu.Unlock()
			sk.arrive(0, it.m)
		}
	}()
	spec := onewaySpec{
		senders: 1, receivers: 1, route: func(int) int { return 0 }, window: 16,
		payload: make([]byte, 16), sink: sk,
		send: func(_ int, m *messages.BenchPing) error {
			mu.Lock()
			queue = append(queue, item{m: m})
			if m.Seq == count-1 {
				queue = append(queue, item{m: m, dup: true})
			}
			cond.Broadcast()
			mu.Unlock()
			return nil
		},
	}
	s, err := h.runOneway(ctx, spec, budget{count: count})
	mu.Lock()
	returned = true
	cond.Broadcast()
	mu.Unlock()
	<-done
	if err != nil {
		t.Fatalf("runOneway: %v", err)
	}
	if s.verified.OK {
		t.Fatalf("verification %q (%+v), but seq %d arrived twice", s.verified, s.verified, count-1)
	}
}
