package netty

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
)

// BenchmarkCodec encodes a new 16-byte message into an envelope and decodes
// it, as a sender builds one message per send and a receiver decodes it:
// the transport's per-message codec work without the network.
func BenchmarkCodec(b *testing.B) {
	payload := make([]byte, 16)
	mt, err := findMessageType([]byte("sparkrpc.messages.BenchPing"))
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	var sink *messages.BenchPing
	b.ReportAllocs()
	for i := range b.N {
		msg := &messages.BenchPing{Seq: uint64(i), Payload: payload}
		h, err := sizeEnvelope("bench", "", "", msg, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = writeEnvelope(buf[:0], &h, msg); err != nil {
			b.Fatal(err)
		}
		e, err := parseEnvelope(buf[frameHeaderLen:])
		if err != nil {
			b.Fatal(err)
		}
		m, err := mt.decode(e.payload)
		if err != nil {
			b.Fatal(err)
		}
		sink = m.(*messages.BenchPing)
	}
	if sink.Seq != uint64(b.N-1) {
		b.Fatalf("decoded seq %d, want %d", sink.Seq, b.N-1)
	}
}

// BenchmarkCodecStatusUpdate is BenchmarkCodec for a final StatusUpdate,
// a message with string fields that both ends check for valid UTF-8.
func BenchmarkCodecStatusUpdate(b *testing.B) {
	result := make([]byte, 8)
	mt, err := findMessageType([]byte("sparkrpc.messages.StatusUpdate"))
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	var sink *messages.StatusUpdate
	b.ReportAllocs()
	for i := range b.N {
		msg := &messages.StatusUpdate{ExecutorId: "1", TaskId: int64(i), State: messages.TaskState_TASK_STATE_FINISHED, Result: result, TaskCpus: 1}
		h, err := sizeEnvelope("CoarseGrainedScheduler", "", "", msg, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = writeEnvelope(buf[:0], &h, msg); err != nil {
			b.Fatal(err)
		}
		e, err := parseEnvelope(buf[frameHeaderLen:])
		if err != nil {
			b.Fatal(err)
		}
		m, err := mt.decode(e.payload)
		if err != nil {
			b.Fatal(err)
		}
		sink = m.(*messages.StatusUpdate)
	}
	if sink.TaskId != int64(b.N-1) {
		b.Fatalf("decoded task %d, want %d", sink.TaskId, b.N-1)
	}
}

// BenchmarkParseEnvelope parses the envelope of a remote ask's 16-byte
// request (target, sender address and id, type, payload): the reader's
// work per frame before it decodes the message.
func BenchmarkParseEnvelope(b *testing.B) {
	msg := &messages.BenchPing{Seq: 1, Payload: make([]byte, 16)}
	buf, _, err := appendEnvelope(nil, "bench", "127.0.0.1:7077", "future$.1234567", msg, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	frame := buf[frameHeaderLen:]
	var n int
	b.ReportAllocs()
	for b.Loop() {
		e, err := parseEnvelope(frame)
		if err != nil {
			b.Fatal(err)
		}
		n += len(e.payload)
	}
	if n == 0 {
		b.Fatal("no payload parsed")
	}
}

// BenchmarkDecodeSmall decodes a 16-byte BenchPing's payload as a
// connection's reader does, into memory of its own (own) or from the
// reader's slabs (slab).
func BenchmarkDecodeSmall(b *testing.B) {
	payload, err := (&messages.BenchPing{Sender: 1, Seq: 7, Payload: make([]byte, 16)}).MarshalVT()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"own", "slab"} {
		b.Run(name, func(b *testing.B) {
			mt, err := findMessageType([]byte("sparkrpc.messages.BenchPing"))
			if err != nil {
				b.Fatal(err)
			}
			var s slabs
			var sink *messages.BenchPing
			b.ReportAllocs()
			for range b.N {
				var m any
				if name == "own" {
					m, err = mt.decode(payload)
				} else {
					m, err = mt.decodeOwned(payload, &s)
				}
				if err != nil {
					b.Fatal(err)
				}
				sink = m.(*messages.BenchPing)
			}
			if sink.Seq != 7 || len(sink.Payload) != 16 {
				b.Fatalf("decoded %v", sink)
			}
		})
	}
}
