package netty

import (
	"bytes"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
)

// decodeSlab decodes msg's encoding with the reader's slab path.
func decodeSlab(t *testing.T, s *slabs, typ string, payload []byte) any {
	t.Helper()
	mt, err := findMessageType([]byte(typ))
	if err != nil {
		t.Fatal(err)
	}
	if mt.slab == nil {
		t.Fatalf("%s: no slab plan, want one (a flat type)", typ)
	}
	m, err := mt.decodeOwned(payload, s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Messages decoded into one slab own their bytes: appending to one never
// writes over the next, a later payload never changes an earlier message,
// and the read buffer can be reused at once.
func TestSlabMessagesOwnTheirBytes(t *testing.T) {
	var s slabs
	first, err := (&messages.StatusUpdate{ExecutorId: "exec-1", TaskId: 1, Result: []byte("aaaa"), Error: "first"}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	second, err := (&messages.StatusUpdate{ExecutorId: "exec-2", TaskId: 2, Result: []byte("bbbb"), Error: "second"}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	buf := append([]byte(nil), first...)
	a := decodeSlab(t, &s, "sparkrpc.messages.StatusUpdate", buf).(*messages.StatusUpdate)
	clear(buf) // the reader reuses its buffer
	b := decodeSlab(t, &s, "sparkrpc.messages.StatusUpdate", second).(*messages.StatusUpdate)
	if len(a.Result) != cap(a.Result) {
		t.Fatalf("result's capacity %d, want its length %d", cap(a.Result), len(a.Result))
	}
	a.Result = append(a.Result, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"...)
	if a.ExecutorId != "exec-1" || a.Error != "first" || !bytes.Equal(a.Result, []byte("aaaaXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX")) {
		t.Fatalf("first message %v, want its own fields", a)
	}
	if b.ExecutorId != "exec-2" || b.Error != "second" || string(b.Result) != "bbbb" || b.TaskId != 2 {
		t.Fatalf("second message %v after an append to the first, want it unchanged", b)
	}
}

// The slab path refuses what decode refuses: a string that is not UTF-8.
func TestSlabRefusesInvalidUTF8(t *testing.T) {
	payload, err := (&messages.StatusUpdate{ExecutorId: "ok", Error: "bad"}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(payload, []byte("bad"))
	payload[i] = 0xff
	mt, err := findMessageType([]byte("sparkrpc.messages.StatusUpdate"))
	if err != nil {
		t.Fatal(err)
	}
	var s slabs
	if _, err := mt.decodeOwned(payload, &s); err == nil {
		t.Fatal("a string that is not UTF-8 decoded, want an error")
	}
	if _, err := mt.decode(payload); err == nil {
		t.Fatal("decode took a string that is not UTF-8")
	}
}

// Types that are not flat, or payloads over slabMaxPayload, take decode's
// path: a message whose bytes are its own allocation.
func TestSlabOnlyForSmallFlatMessages(t *testing.T) {
	mt, err := findMessageType([]byte("sparkrpc.messages.LaunchTask"))
	if err != nil {
		t.Fatal(err)
	}
	if mt.slab != nil {
		t.Fatal("LaunchTask (with a nested message) has a slab plan")
	}
	var s slabs
	big, err := (&messages.BenchPing{Payload: make([]byte, slabMaxPayload+1)}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	m := decodeSlab(t, &s, "sparkrpc.messages.BenchPing", big).(*messages.BenchPing)
	if len(m.Payload) != slabMaxPayload+1 || s.room != nil {
		t.Fatalf("a %d-byte payload went into the slab (room %d)", len(m.Payload), len(s.room))
	}
}
