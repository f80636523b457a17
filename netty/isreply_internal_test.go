package netty

import (
	"testing"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The sender and the receiver of a frame agree on whether it is a reply:
// the sender counts every other frame against its target's credit, and the
// receiver grants credit back only for frames that are not replies, so a
// frame the two saw differently would hold credit that never comes back.
// A sender PID without an id writes no sender id, as a nil one does.
func TestSenderAndReceiverAgreeOnWhatIsAReply(t *testing.T) {
	future := &protoactor.PID{Address: "127.0.0.1:1", Id: futurePrefix + "7"}
	endpoint := &protoactor.PID{Address: "127.0.0.1:1", Id: "driver"}
	for _, tc := range []struct {
		name           string
		target, sender *protoactor.PID
	}{
		{"no sender, to a future", future, nil},
		{"a sender without an id, to a future", future, &protoactor.PID{Address: "127.0.0.1:2"}},
		{"a sender, to a future", future, &protoactor.PID{Address: "127.0.0.1:2", Id: "asker"}},
		{"no sender, to an endpoint", endpoint, nil},
		{"a sender, to an endpoint", endpoint, &protoactor.PID{Address: "127.0.0.1:2", Id: "asker"}},
	} {
		var sID string
		if tc.sender != nil {
			sID = tc.sender.Id
		}
		msg := wrapperspb.String("x")
		h, err := sizeEnvelope(tc.target.Id, "", sID, msg, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		frame, err := writeEnvelope(nil, &h, msg)
		if err != nil {
			t.Fatal(err)
		}
		e, err := parseEnvelope(frame[frameHeaderLen:])
		if err != nil {
			t.Fatal(err)
		}
		received := e.isReply()
		if sent := isReply(tc.target, tc.sender); sent != received {
			t.Errorf("%s: the sender takes it for a reply: %v, the receiver: %v", tc.name, sent, received)
		}
	}
}
