package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// A one-way sender never has more than the window in flight, though it
// reads the arrivals only when the count it read last says the window is
// full.
func TestRunOnewayKeepsToTheWindow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := &harness{cfg: QuickConfig()}
	const window, count = 16, 1000
	sk := &sink{}

	// The receiver delivers what is pending only when the sender flushes,
	// which it does before it waits for the window and at its end: a
	// sender past the window would find more pending.
	var mu sync.Mutex
	var pending []*messages.BenchPing
	most := 0
	flushed := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-flushed:
			case <-stop:
				return
			}
			mu.Lock()
			batch := pending
			pending = nil
			mu.Unlock()
			for _, m := range batch {
				sk.arrive(0, m)
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	spec := onewaySpec{
		senders: 1, receivers: 1, route: func(int) int { return 0 }, window: window,
		payload: make([]byte, 16), sink: sk,
		send: func(_ int, m *messages.BenchPing) error {
			mu.Lock()
			pending = append(pending, m)
			most = max(most, len(pending))
			mu.Unlock()
			return nil
		},
		flush: func(int) error {
			select {
			case flushed <- struct{}{}:
			default:
			}
			return nil
		},
	}
	s, err := h.runOneway(ctx, spec, budget{count: count})
	if err != nil {
		t.Fatalf("runOneway: %v", err)
	}
	if !s.verified.OK || s.messages != count {
		t.Fatalf("%d messages, verification %+v; want %d, all delivered in order", s.messages, s.verified, count)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > window {
		t.Fatalf("%d messages were in flight at once; the window is %d", most, window)
	}
}
