// The endpoint-verifier, which answers other envs' lookups.

package actor

import (
	"github.com/sparkrpc/sparkrpc/messages"
)

// verifier is the endpoint-verifier: it answers CheckExistence(name) with
// whether name is registered on its env (Spark's RpcEndpointVerifier). Its
// Router answers every other message, and every one-way message, as
// unsupported.
type verifier struct {
	Router
	env *Env
}

// OnStart registers the verifier's handlers; it runs before any message.
func (v *verifier) OnStart(*Context) error {
	HandleAsk(&v.Router, v.checkExistence)
	return nil
}

func (v *verifier) checkExistence(_ *CallContext, m *messages.CheckExistence) (*messages.CheckExistenceResponse, error) {
	_, exists := v.env.Endpoint(m.GetName())
	return &messages.CheckExistenceResponse{Exists: exists}, nil
}
