package endpoints

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"go.uber.org/goleak"
)

// logLines returns the JSON log records written to logs so far.
func logLines(t *testing.T, logs *testutil.SyncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// A bus whose listener blocks holds spark.scheduler.listenerbus.eventqueue.capacity
// events: post never blocks, the events past the bound are dropped and
// counted, the first drop is logged at once and later ones at most once a
// minute (the rest at stop), and the events it kept reach the listener in
// order once it unblocks. Its goroutine ends at stop.
func TestListenerBusDropsPastCapacity(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const capacity = 4
	var logs testutil.SyncBuffer
	clock := testutil.NewClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	b := newListenerBus(zerolog.New(&logs), capacity)
	b.now = clock.Now

	started := make(chan struct{})
	release := make(chan struct{})
	got := make(chan int64, 100)
	var once sync.Once
	b.add(ListenerFunc(func(ev Event) {
		once.Do(func() {
			close(started)
			<-release
		})
		got <- ev.(JobStart).JobID
	}))
	stopped := false
	defer func() {
		if !stopped {
			close(release)
			_ = b.stop(context.Background())
		}
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()

	// post must return at once whatever the listener does.
	post := func(ids ...int64) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, id := range ids {
				b.post(JobStart{JobID: id})
			}
		}()
		select {
		case <-done:
		case <-timer.C:
			t.Fatal("post blocked on a slow listener")
		}
	}
	post(0)
	select {
	case <-started: // the listener holds event 0
	case <-timer.C:
		t.Fatal("the listener never got the first event")
	}
	post(1, 2, 3, 4, 5, 6, 7, 8, 9)
	if n := b.droppedEvents(); n != 6 {
		t.Fatalf("dropped %d events, want 6 (10 posted, capacity %d)", n, capacity)
	}
	lines := logLines(t, &logs)
	if len(lines) != 1 || lines[0]["level"] != "error" || lines[0]["key"] != KeyListenerBusCapacity {
		t.Fatalf("after the first drops, log = %v; want one error line naming %s", lines, KeyListenerBusCapacity)
	}

	// Within the minute: counted, not logged.
	clock.Advance(59 * time.Second)
	post(10)
	if n, lines := b.droppedEvents(), logLines(t, &logs); n != 7 || len(lines) != 1 {
		t.Fatalf("59s later: dropped %d (want 7), %d log lines (want 1)", n, len(lines))
	}
	// A minute after the first report: one line with the drops since.
	clock.Advance(time.Second)
	post(11)
	lines = logLines(t, &logs)
	if len(lines) != 2 || lines[1]["level"] != "warn" || lines[1]["dropped"] != 7.0 || lines[1]["total_dropped"] != 8.0 {
		t.Fatalf("a minute later, log = %v; want a second line with dropped=7 (since the first report) total_dropped=8", lines)
	}
	clock.Advance(time.Second)
	post(12) // reported at stop

	close(release)
	for want := int64(0); want < capacity; want++ {
		select {
		case id := <-got:
			if id != want {
				t.Fatalf("delivered event %d, want %d", id, want)
			}
		case <-timer.C:
			t.Fatalf("event %d never delivered", want)
		}
	}
	// Drained: the bus takes events again.
	post(13)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	select {
	case id := <-got:
		if id != 13 {
			t.Fatalf("delivered event %d after draining, want 13", id)
		}
	default:
		t.Fatal("event 13, posted after the bus drained, was not delivered")
	}
	if len(got) != 0 {
		t.Fatalf("%d more events delivered than kept", len(got))
	}
	lines = logLines(t, &logs)
	if n := b.droppedEvents(); n != 9 || len(lines) != 3 || lines[2]["dropped"] != 1.0 {
		t.Fatalf("at stop: dropped %d (want 9), log = %v; want a last line with dropped=1", n, lines)
	}
}
