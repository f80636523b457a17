package netty

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// The frames an outbox carries to a new connection may name references
// defined on the old one: the new connection is told every reference
// before them, and each of them reads as what was sent.
func TestNewConnectionIsToldEveryReference(t *testing.T) {
	p := &peer{}
	p.credit.limN, p.credit.limB = 1, 1<<40
	targets := []string{"a", "b"}
	for _, target := range targets {
		p.credit.of(target).n = 1 // the credit is used: every frame is held
	}
	for i := range 6 {
		target := targets[i%2]
		msg := &messages.BenchPing{Seq: uint64(i)}
		h, err := sizeEnvelope(target, "", "sender", msg, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if held, err := p.holdOverCredit(target, &h, msg); !held || err != nil {
			t.Fatalf("frame %d: held %v, %v", i, held, err)
		}
		if h.ref == 0 {
			t.Fatalf("frame %d has no reference", i)
		}
	}
	if p.out.frames != 2 {
		t.Fatalf("%d frames in the outbox, want the 2 definitions", p.out.frames)
	}
	p.out.reset() // the definitions went out on the old connection
	p.restart()   // a new connection, which carries the held frames

	c := &conn{}
	var got []string
	forEachFrame(p.out.chunks, 0, func(body []byte) {
		e, err := parseEnvelope(body)
		if err != nil {
			t.Fatal(err)
		}
		if e.ref == 0 && isCreditFrame(e.target) {
			if string(e.typ) != refDefine {
				t.Fatalf("control frame %s", e.typ)
			}
			if err := c.defineRef(e.payload); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := c.resolve(&e); err != nil {
			t.Fatal(err)
		}
		var m messages.BenchPing
		if err := proto.Unmarshal(e.payload, &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s/%s/%s/%d", e.target, e.senderID, e.typ, m.Seq))
	})
	want := []string{
		"a/sender/sparkrpc.messages.BenchPing/0", "a/sender/sparkrpc.messages.BenchPing/2", "a/sender/sparkrpc.messages.BenchPing/4",
		"b/sender/sparkrpc.messages.BenchPing/1", "b/sender/sparkrpc.messages.BenchPing/3", "b/sender/sparkrpc.messages.BenchPing/5",
	}
	slices.Sort(got) // the queues of the two targets are released in any order
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the new connection reads %v, want %v", got, want)
	}
}
