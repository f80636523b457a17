package netty

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// deferInbox records what the reader posts: decoded messages by their
// size, deferred ones as such, kept for the test to decode.
type deferInbox struct {
	events   []string
	deferred []actor.Deferred
}

func (*deferInbox) Accepts(protoreflect.FullName) bool { return true }

func (in *deferInbox) Post(m actor.Inbound) bool {
	return in.PostBatch([]actor.Inbound{m})
}

func (in *deferInbox) PostBatch(batch []actor.Inbound) bool {
	for _, m := range batch {
		if m.Deferred != nil {
			in.events = append(in.events, "deferred "+m.Deferred.Type().String())
			in.deferred = append(in.deferred, m.Deferred)
			continue
		}
		in.events = append(in.events, fmt.Sprintf("decoded %d bytes", len(m.Msg.(*wrapperspb.BytesValue).GetValue())))
	}
	return true
}

// A frame larger than the read buffer is read into a pooled chunk and
// posted undecoded, in its place among the others, for the endpoint's loop
// to decode; the flow control counts the chunk. The message it decodes to
// owns its bytes: the chunk goes back to its pool.
func TestLargeFramePostedForTheLoopToDecode(t *testing.T) {
	in := &deferInbox{}
	host := &batchHost{log: &batchLog{}, inboxes: map[string]actor.Inbox{"a": in}}
	tr := &Transport{host: host, maxSize: 4 << 20, maxInFlight: 1 << 30, maxInFlightB: 1 << 40}
	tr.info.Identity = "server-1"
	c := &conn{t: tr, targets: map[string]*target{}, types: map[string]*messageType{}}
	c.info.Identity = "client-1"

	big := bytes.Repeat([]byte{7}, 100<<10)
	var stream []byte
	smallFrames := 0
	for _, m := range []*wrapperspb.BytesValue{wrapperspb.Bytes([]byte("first")), wrapperspb.Bytes(big), wrapperspb.Bytes([]byte("third"))} {
		var n int
		var err error
		if stream, n, err = appendEnvelope(stream, "a", "", "", m, 4<<20); err != nil {
			t.Fatal(err)
		}
		if len(m.GetValue()) < len(big) {
			smallFrames += n
		}
	}
	src := bytes.NewReader(stream)
	c.fr = newFrameReader(src, readBufferSize)
	c.fr.establish(src)
	c.fr.max = tr.maxSize
	for {
		b, err := c.fr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := c.handle(b); err != nil {
			t.Fatal(err)
		}
	}
	c.flush()

	want := []string{"decoded 5 bytes", "deferred *wrapperspb.BytesValue", "decoded 5 bytes"}
	if !slices.Equal(in.events, want) {
		t.Fatalf("posted %q, want %q", in.events, want)
	}
	chunk := in.deferred[0].(*pendingDecode).chunk
	if cap(chunk) < len(big) || c.fr.chunk != nil {
		t.Fatalf("the deferred message holds a chunk of %d bytes; the reader still holds %d", cap(chunk), cap(c.fr.chunk))
	}
	if got, want := c.flow.b, int64(smallFrames+cap(chunk)); got != want {
		t.Errorf("flow control counted %d bytes, want %d: the small frames and the chunk", got, want)
	}
	msg, ok := in.deferred[0].Decode()
	if !ok {
		t.Fatal("Decode failed")
	}
	clear(chunk[:cap(chunk)]) // as the chunk's next user would overwrite it
	if got := msg.(*wrapperspb.BytesValue).GetValue(); !bytes.Equal(got, big) {
		t.Fatalf("decoded %d bytes that differ from the %d sent once the chunk is reused", len(got), len(big))
	}
}
