package netty

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// A credit queue releases its frames in order and never past the credit,
// whether a chunk moves whole or its frames are copied one by one; what
// Send writes to the outbox after a whole chunk moved follows it.
func TestReleaseKeepsOrderAndCredit(t *testing.T) {
	const limN, frames = 150, 5000
	p := &peer{}
	p.credit.limN, p.credit.limB = limN, 1<<40
	ec := p.credit.of("sink")
	ec.n = limN // the credit is used: everything is held
	var sizes []int
	for i := range frames {
		// Sizes vary so that chunks end on different frames.
		msg := &messages.BenchPing{Seq: uint64(i), Payload: make([]byte, i%97)}
		h, err := sizeEnvelope("sink", "", "", msg, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if held, err := p.holdOverCredit("sink", &h, msg); !held || err != nil {
			t.Fatalf("frame %d: held %v, %v; want it held", i, held, err)
		}
		sizes = append(sizes, h.size)
	}
	if len(ec.held.chunks) < 10 {
		t.Fatalf("%d chunks held, want many small ones", len(ec.held.chunks))
	}
	var got []uint64
	take := func() {
		forEachFrame(p.out.chunks, 0, func(body []byte) {
			e, err := parseEnvelope(body)
			if err != nil {
				t.Fatal(err)
			}
			if e.ref == 0 && isCreditFrame(e.target) {
				return // the definition of the frames' names
			}
			m := &messages.BenchPing{}
			if err := proto.Unmarshal(e.payload, m); err != nil {
				t.Fatal(err)
			}
			got = append(got, m.Seq)
		})
		p.out.chunks, p.out.size, p.out.frames = nil, 0, 0
	}
	var moved, copied int         // chunks of the outbox after a release
	inflight := make([]int, limN) // the sizes of the frames in flight, oldest first
	for grant := 1; len(got) < frames; grant = grant%limN + 1 {
		// The peer processed grant messages of those in flight.
		grant = min(grant, len(inflight))
		for _, size := range inflight[:grant] {
			ec.n--
			ec.b -= frameCharge(size)
		}
		inflight = inflight[grant:]
		before := len(got)
		inFlight := ec.n
		held := map[*byte]bool{}
		for _, c := range ec.held.chunks {
			held[&c[:1][0]] = true
		}
		p.release(ec)
		for _, c := range p.out.chunks {
			if held[&c[:1][0]] {
				moved++
			} else {
				copied++
			}
		}
		take()
		inflight = append(inflight, sizes[before:len(got)]...)
		if ec.n > limN {
			t.Fatalf("%d messages in flight, credit %d", ec.n, limN)
		}
		if released := int64(len(got) - before); released != ec.n-inFlight {
			t.Fatalf("released %d frames, counted %d", released, ec.n-inFlight)
		}
		if ec.n < limN && !ec.held.empty() {
			t.Fatalf("%d in flight and frames still held after a release", ec.n)
		}
	}
	if moved == 0 || copied == 0 {
		t.Fatalf("%d chunks moved whole and %d written by copies, want both", moved, copied)
	}
	var charged int64 // what is in flight, as the receiver counts it
	for _, size := range inflight {
		charged += frameCharge(size)
	}
	if ec.b != charged {
		t.Fatalf("%d bytes of credit counted in flight, the frames in flight are charged %d", ec.b, charged)
	}
	for i, seq := range got {
		if seq != uint64(i) {
			t.Fatalf("frame %d released as seq %d: out of order", i, seq)
		}
	}
	if p.credit.heldB != 0 || ec.held.size != 0 || ec.held.frames != 0 || len(ec.heldIn) != 0 {
		t.Fatalf("after everything was released: held %d bytes, queue %d bytes %d frames %d chunks", p.credit.heldB, ec.held.size, ec.held.frames, len(ec.heldIn))
	}
}
