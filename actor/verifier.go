package actor

import (
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// verifier is the endpoint-verifier: it answers CheckExistence(name) with
// whether name is registered on its env (Spark's RpcEndpointVerifier).
type verifier struct{ env *Env }

func (v *verifier) Receive(*Context, proto.Message) error { return ErrUnsupportedMessage }

func (v *verifier) ReceiveAndReply(ctx *CallContext, msg proto.Message) error {
	m, ok := msg.(*messages.CheckExistence)
	if !ok {
		return ErrUnsupportedMessage
	}
	_, exists := v.env.Endpoint(m.GetName())
	ctx.Reply(&messages.CheckExistenceResponse{Exists: exists})
	return nil
}
