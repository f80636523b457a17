package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// unsupporting takes no message, and answers every ask with a reply
// larger than the server's spark.rpc.message.maxSize when asked for one.
type unsupporting struct{}

func (unsupporting) Receive(*actor.Context, proto.Message) error { return actor.ErrUnsupportedMessage }
func (unsupporting) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	if _, big := msg.(*wrapperspb.Int64Value); big {
		ctx.Reply(wrapperspb.Bytes(make([]byte, 2<<20)))
		return nil
	}
	return actor.ErrUnsupportedMessage
}

// A remote failure reaches the asker as the typed error a local ask gets:
// errors.As finds *EndpointNotFoundError, *UnsupportedMessageError and
// *MessageTooLargeError, with their fields, and their text is the remote
// one.
func TestRemoteFailuresKeepTheirTypes(t *testing.T) {
	server := newEnv(t, "server", actor.NewConf().Set(actor.KeyMessageMaxSize, "1"))
	register(t, server, "unsupporting", unsupporting{})
	register(t, server, "int64s", acceptsInt64{newEcho()})
	client := newClientEnv(t, "client", nil)
	ctx := testutil.Context(t, waitFor)

	_, err := client.RemoteRef(server.Address(), "nope").AskSync(ctx, str("hi"))
	var nf *actor.EndpointNotFoundError
	if !errors.As(err, &nf) || nf.Name != "nope" || nf.Error() != err.Error() {
		t.Errorf("ask to a missing endpoint: %v; errors.As *EndpointNotFoundError = %+v, want Name \"nope\" and the same text", err, nf)
	}

	for _, target := range []string{"unsupporting", "int64s"} {
		_, err = client.RemoteRef(server.Address(), target).AskSync(ctx, str("hi"))
		var ue *actor.UnsupportedMessageError
		if !errors.As(err, &ue) || ue.Type != "google.protobuf.StringValue" || ue.From == "" {
			t.Errorf("%s: ask of an unsupported message: %v; errors.As *UnsupportedMessageError = %+v, want its type and sender", target, err, ue)
		}
	}

	_, err = client.RemoteRef(server.Address(), "unsupporting").AskSync(ctx, wrapperspb.Int64(1))
	var tl *actor.MessageTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1<<20 || tl.Size <= tl.Limit {
		t.Errorf("ask whose reply is too large: %v; errors.As *MessageTooLargeError = %+v, want the reply's size over 1 MiB", err, tl)
	}

	// The codes still match their sentinels, and other types do not match.
	var ue *actor.UnsupportedMessageError
	if !errors.Is(err, actor.ErrMessageTooLarge) || errors.As(err, &ue) {
		t.Errorf("too large reply: errors.Is ErrMessageTooLarge = %v, errors.As *UnsupportedMessageError = %v; want true, false",
			errors.Is(err, actor.ErrMessageTooLarge), errors.As(err, &ue))
	}
}
