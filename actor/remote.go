// Remote refs and lookup, and the protoactor process that hands messages for other envs to the transport.

package actor

import (
	"context"
	"fmt"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// RemoteRef returns an unverified reference to the endpoint name of the env
// listening at addr. Use SetupEndpointRef to check that it exists.
func (e *Env) RemoteRef(addr RpcAddress, name string) *Ref {
	id := addr.HostPort()
	if id == e.identity {
		if r, ok := e.Endpoint(name); ok {
			return r
		}
	}
	return &Ref{env: e, pid: protoactor.NewPID(id, name), name: name, addr: addr}
}

// RefFromProto returns the reference a message carried.
func (e *Env) RefFromProto(p *messages.EndpointRef) (*Ref, error) {
	if p == nil || p.GetName() == "" || p.GetAddress() == "" {
		return nil, fmt.Errorf("%w: incomplete endpoint reference %v", ErrInvalidName, p)
	}
	if p.GetAddress() == e.identity {
		if r, ok := e.Endpoint(p.GetName()); ok {
			return r, nil
		}
		return &Ref{env: e, pid: protoactor.NewPID(e.identity, p.GetName()), name: p.GetName(), addr: e.info.Address, client: e.info.ClientMode}, nil
	}
	r := &Ref{env: e, pid: protoactor.NewPID(p.GetAddress(), p.GetName()), name: p.GetName(), client: p.GetClient()}
	if !p.GetClient() {
		addr, err := ParseHostPort(p.GetAddress())
		if err != nil {
			return nil, err
		}
		r.addr = addr
	}
	return r, nil
}

// SetupEndpointRef looks up the endpoint name on the env listening at addr
// by asking its endpoint-verifier, within the lookup timeout
// (spark.rpc.lookupTimeout). A missing endpoint is an *EndpointNotFoundError
// whose text is "Cannot find endpoint: spark://name@host:port".
func (e *Env) SetupEndpointRef(ctx context.Context, addr RpcAddress, name string) (*Ref, error) {
	if e.stopped.Load() {
		return nil, ErrEnvStopped
	}
	uri := EndpointAddress{Address: addr, Name: name}.String()
	if addr.HostPort() == e.identity {
		if r, ok := e.Endpoint(name); ok {
			return r, nil
		}
		return nil, &EndpointNotFoundError{Name: name, URI: uri}
	}
	v := e.RemoteRef(addr, VerifierName)
	res, err := ResultAs[*messages.CheckExistenceResponse](v.AskWithTimeout(ctx, &messages.CheckExistence{Name: name}, e.lookupTimeout))
	if err != nil {
		return nil, fmt.Errorf("lookup of %s: %w", uri, err)
	}
	if !res.GetExists() {
		return nil, &EndpointNotFoundError{Name: name, URI: uri}
	}
	return e.RemoteRef(addr, name), nil
}

// SetupEndpointRefByURI parses uri ("spark://name@host:port") and looks the
// endpoint up with SetupEndpointRef.
func (e *Env) SetupEndpointRefByURI(ctx context.Context, uri string) (*Ref, error) {
	a, err := ParseEndpointAddress(uri)
	if err != nil {
		return nil, err
	}
	return e.SetupEndpointRef(ctx, a.Address, a.Name)
}

func (e *Env) sendRemote(target, sender *protoactor.PID, msg proto.Message) error {
	if e.transport == nil {
		return ErrNoTransport
	}
	return e.transport.Send(target, sender, msg)
}

func (e *Env) peerAddress(identity string) RpcAddress {
	if identity == e.identity {
		return e.info.Address
	}
	if e.transport == nil {
		return RpcAddress{}
	}
	return e.transport.PeerAddress(identity)
}

// remoteProcess is the protoactor process of every PID on another env: it
// hands the message to the transport.
type remoteProcess struct{ env *Env }

func (p *remoteProcess) SendUserMessage(pid *protoactor.PID, message any) {
	_, msg, sender := protoactor.UnwrapEnvelope(message)
	pm, ok := msg.(proto.Message)
	if !ok {
		err := fmt.Errorf("%w: %T is not a protobuf message and cannot leave the process", ErrUnsupportedMessage, msg)
		if f, isFuture := msg.(*Future); isFuture {
			f.complete(nil, err)
			return
		}
		p.env.log.Error().Err(err).Str("to", pid.String()).Msg("message not sent")
		if sender != nil {
			p.env.undeliverable(pid, sender, nil, err)
		}
		return
	}
	if sender != nil && sender.Address == p.env.identity && isProtoactorFutureID(sender.Id) {
		// A plain protoactor RequestFuture: its reply is taken from this
		// peer only (see paReplies).
		p.env.paReplies.bind(sender.Id, pid.Address)
	}
	if err := p.env.transport.Send(pid, sender, pm); err != nil {
		p.env.undeliverable(pid, sender, pm, err)
	}
}

func (p *remoteProcess) SendSystemMessage(pid *protoactor.PID, message any) {
	if w, ok := message.(*protoactor.Watch); ok {
		p.env.System().Root.Send(w.Watcher, &protoactor.Terminated{Who: pid, Why: protoactor.TerminatedReason_AddressTerminated})
	}
}

func (p *remoteProcess) Stop(*protoactor.PID) {}
