package netty

import (
	"bytes"
	"testing"
	"unsafe"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// lendFixture returns the pending decode of a 64 KiB BenchPing in a pooled
// chunk, as the reader posts it, on a connection that lends up to maxLent
// bytes, and the payload sent.
func lendFixture(t *testing.T, maxLent int64, poisoned bool) (*pendingDecode, []byte) {
	t.Helper()
	mt, err := findMessageType([]byte("sparkrpc.messages.BenchPing"))
	if err != nil || !mt.lends {
		t.Fatalf("BenchPing: %v, lends %v; want vtprotobuf's unsafe decoder", err, mt != nil && mt.lends)
	}
	payload := bytes.Repeat([]byte("lent"), 16<<10)
	enc, err := (&messages.BenchPing{Seq: 9, Payload: payload}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	chunk := append(getChunk(len(enc)+100, false), make([]byte, 100)...) // the frame's envelope
	chunk = append(chunk, enc...)
	tr := &Transport{maxLentB: maxLent, poison: poisoned}
	c := &conn{t: tr}
	return newPendingDecode(c, mt, &protoactor.PID{Id: "a"}, nil, chunk, chunk[100:]), payload
}

// The message Lend returns aliases the chunk: its payload's bytes are the
// chunk's own, not a copy. The chunk is counted as lent until the last
// reference is released.
func TestLentMessageAliasesTheChunk(t *testing.T) {
	p, payload := lendFixture(t, 1<<20, false)
	chunk := p.chunk
	msg, loan, ok := p.Lend()
	if !ok || loan == nil {
		t.Fatalf("Lend = %v, %v, %v; want a lent message", msg, loan, ok)
	}
	got := msg.(*messages.BenchPing).Payload
	if !within(got, chunk) {
		t.Fatalf("the payload at %p is not within the chunk at %p", unsafe.SliceData(got), unsafe.SliceData(chunk))
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("the lent payload differs from the one sent")
	}
	tr := p.c.t
	if n, b := tr.lentBuffers.Load(), tr.lentBytes.Load(); n != 1 || b != int64(cap(chunk)) {
		t.Fatalf("lent %d buffers, %d bytes; want 1 of %d", n, b, cap(chunk))
	}
	loan.Retain()
	loan.Release()
	if tr.lentBuffers.Load() != 1 {
		t.Fatal("the chunk came back with a reference still held")
	}
	loan.Release()
	if n, b := tr.lentBuffers.Load(), tr.lentBytes.Load(); n != 0 || b != 0 {
		t.Fatalf("after the last release: lent %d buffers, %d bytes", n, b)
	}
}

// Past the connection's bound of lent bytes the message is decoded into
// memory of its own, without a loan, and the chunk goes back at once.
func TestLendPastTheBoundCopies(t *testing.T) {
	p, payload := lendFixture(t, 64<<10, false) // less than one chunk
	chunk := p.chunk
	msg, loan, ok := p.Lend()
	if !ok || loan != nil {
		t.Fatalf("Lend = %v, %v, %v; want an owned message", msg, loan, ok)
	}
	got := msg.(*messages.BenchPing).Payload
	if within(got, chunk) || !bytes.Equal(got, payload) {
		t.Fatal("the message past the bound aliases the chunk, or differs")
	}
}

// With poison on, the last release overwrites the chunk with poison, and a
// second release panics.
func TestReleasePoisonsAndCatchesASecondRelease(t *testing.T) {
	p, _ := lendFixture(t, 1<<20, true)
	msg, loan, _ := p.Lend()
	got := msg.(*messages.BenchPing).Payload
	loan.Release()
	for i := range 8 {
		if b := got[i]; b != 0xde && b != 0xad && b != 0xbe && b != 0xef {
			t.Fatalf("byte %d of a released payload is %#x, want poison", i, b)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second Release did not panic")
		}
	}()
	loan.Release()
}

// within reports whether the bytes of b lie within the array of chunk.
func within(b, chunk []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(chunk)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return at >= start && at+uintptr(len(b)) <= start+uintptr(cap(chunk))
}
