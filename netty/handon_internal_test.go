package netty

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// replyHost is a batchHost that also takes replies.
type replyHost struct {
	*batchHost
}

func (h replyHost) LookupReply(_ string, id []byte) (actor.PendingReply, actor.ReplyStatus) {
	id = bytes.Clone(id)
	return actor.PendingReplyFunc("", func(msg proto.Message) {
		h.log.events = append(h.log.events, fmt.Sprintf("reply %s %s", id, msg.(*wrapperspb.StringValue).GetValue()))
	}), actor.ReplyPending
}

// readAll runs the read loop's steps (handOn, next, handle) over stream,
// which the reader's first read of it takes whole, until it ends, and
// flushes.
func readAll(t *testing.T, c *conn, stream []byte) {
	t.Helper()
	if len(stream) > initialBufferSize {
		t.Fatalf("a stream of %d bytes takes more than one read", len(stream))
	}
	src := bytes.NewReader(stream)
	c.fr = newFrameReader(src, readBufferSize)
	c.fr.establish(src)
	for {
		c.handOn()
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
}

// While a read holds more frames, the reader hands on the asks and replies
// it has read every handOnGroup of them (the asks posted as one batch), so
// that a window of asks does not go through as one batch; one-way messages
// keep batches of maxBatch. A reply counts towards the group as an ask does.
func TestReaderHandsOnAsksAndRepliesInGroups(t *testing.T) {
	log := &batchLog{}
	host := replyHost{&batchHost{log: log, inboxes: map[string]actor.Inbox{
		"a": &batchInbox{name: "a", log: log},
	}}}
	tr := &Transport{host: host, maxSize: 1 << 20, maxInFlight: 1 << 30, maxInFlightB: 1 << 40}
	tr.info.Identity = "server-1"
	c := &conn{t: tr, targets: map[string]*target{}, types: map[string]*messageType{}}
	c.info.Identity = "client-1"

	var stream []byte
	frame := func(target, senderID string, n int) {
		t.Helper()
		var err error
		if stream, _, err = appendEnvelope(stream, target, "", senderID, wrapperspb.String(fmt.Sprint(n)), 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	// 5 replies, asks up to one past three groups, then one-way messages
	// for more than a batch.
	const g = handOnGroup
	const replies, lastAsk, last = 5, 3*g + 1, 3*g + 1 + maxBatch + 3
	for n := 1; n <= last; n++ {
		switch {
		case n <= replies:
			frame(futurePrefix+fmt.Sprint(n), "", n)
		case n <= lastAsk:
			frame("a", futurePrefix+fmt.Sprint(n), n)
		default:
			frame("a", "", n)
		}
	}
	readAll(t, c, stream)

	var want []string
	for n := 1; n <= replies; n++ {
		want = append(want, fmt.Sprintf("reply %s%d %d", futurePrefix, n, n))
	}
	want = append(want,
		// The replies count towards the first group.
		fmt.Sprintf("batch a %d..%d", replies+1, g),
		fmt.Sprintf("batch a %d..%d", g+1, 2*g),
		fmt.Sprintf("batch a %d..%d", 2*g+1, 3*g),
		// The last ask and the one-way messages after it fill batches of
		// maxBatch: one-way messages do not count.
		fmt.Sprintf("batch a %d..%d", lastAsk, lastAsk+maxBatch-1),
		fmt.Sprintf("batch a %d..%d", lastAsk+maxBatch, last),
	)
	if !slices.Equal(log.events, want) {
		t.Fatalf("handed on:\n%q\nwant\n%q", log.events, want)
	}
}
