package bench

import (
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The hand-off of the delivered TCP baselines gives its consumer every
// message put, in order, on the consumer's own goroutine, and drain returns
// once close is called after the last put. batchDone follows every
// message handled.
func TestHandoffDeliversEveryMessageInOrder(t *testing.T) {
	const n = 10000
	q := newHandoff[*messages.BenchPing]()
	var got []uint64
	handledAtBatchEnd := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.drain(func(m *messages.BenchPing) { got = append(got, m.Seq) }, func() error {
			handledAtBatchEnd = len(got)
			return nil
		})
	}()
	for i := range uint64(n) {
		q.put(&messages.BenchPing{Seq: i})
	}
	q.close()
	wg.Wait()
	if len(got) != n {
		t.Fatalf("handled %d messages, want %d", len(got), n)
	}
	if handledAtBatchEnd != n {
		t.Fatalf("the last batch ended after %d messages, want %d", handledAtBatchEnd, n)
	}
	for i, s := range got {
		if s != uint64(i) {
			t.Fatalf("message %d has seq %d", i, s)
		}
	}
}
