package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/sparkrpc/sparkrpc/messages"
)

func TestCheckerVerification(t *testing.T) {
	type arrival struct {
		sender int32
		seq    uint64
	}
	tests := []struct {
		name    string
		ordered bool
		sent    int64
		got     []arrival
		want    Verification
	}{
		{name: "in order", ordered: true, sent: 3, got: []arrival{{0, 0}, {0, 1}, {0, 2}},
			want: Verification{Sent: 3, Received: 3, Ordered: true, OK: true}},
		{name: "two senders interleaved", ordered: true, sent: 4, got: []arrival{{0, 0}, {1, 0}, {1, 1}, {0, 1}},
			want: Verification{Sent: 4, Received: 4, Ordered: true, OK: true}},
		{name: "lost", ordered: true, sent: 3, got: []arrival{{0, 0}, {0, 1}},
			want: Verification{Sent: 3, Received: 2, Lost: 1, Ordered: true}},
		{name: "gap then late arrival", ordered: true, sent: 3, got: []arrival{{0, 0}, {0, 2}, {0, 1}},
			want: Verification{Sent: 3, Received: 3, Reordered: 2, Ordered: true}},
		{name: "unordered accepts any order", ordered: false, sent: 3, got: []arrival{{0, 2}, {0, 0}, {0, 1}},
			want: Verification{Sent: 3, Received: 3, OK: true}},
		{name: "duplicate", ordered: true, sent: 2, got: []arrival{{0, 0}, {0, 1}, {0, 1}},
			want: Verification{Sent: 2, Received: 3, Duplicates: 1, Ordered: true}},
		{name: "unknown sender", ordered: true, sent: 1, got: []arrival{{0, 0}, {7, 0}},
			want: Verification{Sent: 1, Received: 2, Unknown: 1, Ordered: true}},
		{name: "large sequence numbers", ordered: true, sent: 1000, got: func() []arrival {
			var a []arrival
			for i := range 1000 {
				a = append(a, arrival{0, uint64(i)})
			}
			return a
		}(), want: Verification{Sent: 1000, Received: 1000, Ordered: true, OK: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecker(2, tc.ordered)
			for _, a := range tc.got {
				c.check(a.sender, a.seq)
			}
			if got := c.verification(tc.sent); got != tc.want {
				t.Fatalf("verification = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTallyAwait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tl := newTally(0)
	done := make(chan error, 1)
	go func() { done <- tl.await(ctx, 3, 5*time.Second) }()
	for range 3 {
		tl.arrived()
	}
	if err := <-done; err != nil {
		t.Fatalf("await: %v", err)
	}

	stalled := newTally(0)
	stalled.arrived()
	err := stalled.await(ctx, 2, 50*time.Millisecond)
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("await of a missing message: %v, want ErrStalled", err)
	}
}

// A run whose transport loses or reorders a message must fail verification.
func TestRunOnewayDetectsLossAndReorder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := &harness{cfg: QuickConfig()}
	h.cfg.StallTimeout = 200 * time.Millisecond
	for _, tc := range []struct {
		name string
		// deliver decides what a faulty transport does with each message.
		deliver func(m *messages.BenchPing, arrive func(*messages.BenchPing))
		check   func(v Verification) bool
	}{
		{name: "faithful", deliver: func(m *messages.BenchPing, arrive func(*messages.BenchPing)) { arrive(m) },
			check: func(v Verification) bool { return v.OK && v.Received == 100 }},
		{name: "loses seq 5", deliver: func(m *messages.BenchPing, arrive func(*messages.BenchPing)) {
			if m.Seq != 5 {
				arrive(m)
			}
		}, check: func(v Verification) bool { return !v.OK && v.Lost == 1 }},
		{name: "swaps 5 and 6", deliver: func() func(m *messages.BenchPing, arrive func(*messages.BenchPing)) {
			var held *messages.BenchPing
			return func(m *messages.BenchPing, arrive func(*messages.BenchPing)) {
				switch {
				case m.Seq == 5:
					held = m
				case m.Seq == 6:
					arrive(m)
					arrive(held)
				default:
					arrive(m)
				}
			}
		}(), check: func(v Verification) bool { return !v.OK && v.Reordered > 0 && v.Lost == 0 }},
		{name: "duplicates seq 3", deliver: func(m *messages.BenchPing, arrive func(*messages.BenchPing)) {
			arrive(m)
			if m.Seq == 3 {
				arrive(m)
			}
		}, check: func(v Verification) bool { return !v.OK && v.Duplicates == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk := &sink{}
			spec := onewaySpec{
				senders: 1, receivers: 1, route: func(int) int { return 0 }, window: 16,
				payload: make([]byte, 16), sink: sk,
				send: func(_ int, m *messages.BenchPing) error {
					tc.deliver(m, func(m *messages.BenchPing) { sk.arrive(0, m) })
					return nil
				},
			}
			s, err := h.runOneway(ctx, spec, budget{count: 100})
			if err != nil {
				t.Fatalf("runOneway: %v", err)
			}
			if !tc.check(s.verified) {
				t.Fatalf("verification %+v does not show the fault", s.verified)
			}
		})
	}
}

func TestHistogramLatency(t *testing.T) {
	h := newHistogram()
	if h.latency() != nil {
		t.Fatal("latency of an empty histogram is not nil")
	}
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	l := h.latency()
	if l.Count != 1000 {
		t.Fatalf("count %d, want 1000", l.Count)
	}
	near := func(got, want float64) bool { return got >= want*0.98 && got <= want*1.02 }
	if !near(l.P50, 500) || !near(l.P99, 990) || !near(l.P999, 999) || !near(l.Max, 1000) {
		t.Fatalf("latency %+v, want p50≈500 p99≈990 p999≈999 max≈1000 µs", l)
	}
}

// The raw TCP ceiling's hand-written wire format is BenchPing's.
func TestTCPFramesAreProtobuf(t *testing.T) {
	for _, m := range []*messages.BenchPing{
		{},
		{Sender: 3, Seq: 1 << 40, Payload: []byte("payload")},
		{Seq: 7},
	} {
		var buf bytes.Buffer
		fw := &frameWriter{w: bufio.NewWriter(&buf)}
		if err := fw.writePing(m); err != nil {
			t.Fatal(err)
		}
		if err := fw.w.Flush(); err != nil {
			t.Fatal(err)
		}
		body := buf.Bytes()[4:]
		var got messages.BenchPing
		if err := proto.Unmarshal(body, &got); err != nil || !proto.Equal(&got, m) {
			t.Fatalf("frame of %v decodes to %v (%v)", m, &got, err)
		}
		sender, seq, err := decodeIDs(body)
		if err != nil || sender != m.Sender || seq != m.Seq {
			t.Fatalf("decodeIDs of %v = %d, %d, %v", m, sender, seq, err)
		}
		want, _ := proto.Marshal(m)
		if !bytes.Equal(body, want) {
			t.Fatalf("frame %x, proto.Marshal %x", body, want)
		}
	}
	if _, _, err := decodeIDs([]byte{0x08}); err == nil {
		t.Fatal("decodeIDs of a truncated varint succeeded")
	}
}
