// The Transport interface that carries messages between envs, and what it reports to its env.

package actor

import (
	"context"
	"reflect"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Transport carries messages between envs. The actor package declares it and
// uses it; package netty implements it over TCP and MemNetwork implements it
// in memory for tests. An env without a transport is purely local.
//
// Every env has an identity, the string that appears as the Address of the
// protoactor PIDs of its endpoints: "host:port" for an env that listens, a
// client id for an env in client mode. A PID whose Address is not the local
// identity is resolved through the transport, so plain protoactor code
// (Send, Request, RequestFuture) reaches remote endpoints too.
type Transport interface {
	// Start attaches the transport to the env that host represents and
	// returns how the env is reachable. It is called once, before any
	// endpoint is registered.
	Start(host TransportHost) (TransportInfo, error)

	// Send queues msg for the endpoint target on the peer whose identity is
	// target.Address. sender is nil for a one-way message; otherwise it is
	// the PID the reply goes to. Send must not block on the network: a
	// message that cannot be delivered later is reported through
	// TransportHost.Undeliverable (asks then fail at once).
	Send(target, sender *protoactor.PID, msg proto.Message) error

	// PeerAddress returns the address that CallContext.SenderAddress and
	// timeout errors report for a peer identity: the listen address of a
	// listening peer, the socket address of a client-mode peer, and the zero
	// RpcAddress when the identity is unknown.
	PeerAddress(identity string) RpcAddress

	// Shutdown closes the listener and every connection, so that the asks
	// peers have pending on this env fail at once. It is called once, by
	// Env.Shutdown or Env.Close, after the env has stopped accepting work
	// and failed its own pending asks, and before it waits for running
	// handlers: those may still call Send, which must then fail. It may
	// write what was queued before it was called, but gives up when ctx
	// ends (Close passes a ctx that has ended). Closing connections during
	// Shutdown must not be reported to the host as disconnections.
	Shutdown(ctx context.Context) error
}

// TransportInfo is what a started transport tells its env.
type TransportInfo struct {
	// Identity is the Address of the env's PIDs: "host:port" of the
	// advertised listen address, or a unique client id in client mode.
	Identity string
	// Address is the advertised listen address; the zero RpcAddress in
	// client mode.
	Address RpcAddress
	// ClientMode is true when the env does not listen.
	ClientMode bool
}

// Peer identifies the other side of a connection in network events.
type Peer struct {
	// Identity is the peer's PID Address (see Transport).
	Identity string
	// Address is the peer's listen address, or its socket address when it
	// does not listen. Endpoints see this one.
	Address RpcAddress
}

// TransportHost is the env as its transport sees it: everything a transport
// needs from the env, and nothing an endpoint writer uses. The env hands it
// to Transport.Start; it is not reachable otherwise. Its methods are safe for
// concurrent use.
type TransportHost interface {
	// Conf is the env's configuration.
	Conf() *Conf
	// Logger is the env's logger (see Env.Logger).
	Logger() zerolog.Logger
	// Deliver hands an inbound message, in.Msg (in.Deferred must be nil:
	// the transport decodes it first), to the local endpoint (or plain
	// protoactor process) whose id is target.Id. in.Sender is nil for a
	// one-way message; a reply to an ask goes to LookupReply instead. A
	// target that is not registered fails the asker ("Could not find
	// NAME.") or counts the message as dropped, and so does a message of a
	// type the endpoint does not accept from other envs (Acceptor), with an
	// error that matches ErrUnsupportedMessage.
	Deliver(target *protoactor.PID, in Inbound)
	// NoEndpoint handles a message for the local target id that runs no
	// endpoint (Inbox returned nil), of the type typ, without its payload:
	// it fails the asker ("Could not find NAME.", or the env is stopped),
	// or counts a one-way message as dropped (the drop handler gets a
	// WireEnvelope that names the target and type), and returns true. It
	// returns false when the target is there after all (an endpoint
	// registered meanwhile, or a plain protoactor process): the transport
	// then decodes the message and calls Deliver. A transport calls it
	// before it decodes such a message, so that a frame for a target that
	// does not exist costs no decode.
	NoEndpoint(target, sender *protoactor.PID, typ protoreflect.FullName) bool
	// Inbox returns the inbox of the running local endpoint whose name is
	// id, or nil when there is none (no such endpoint, or it is stopping). A
	// transport may keep it for a target and post to it instead of calling
	// Deliver, until Post reports false. Keeping it does not keep a stopped
	// endpoint in memory.
	Inbox(id string) Inbox
	// LookupReply returns the pending ask of this env whose reply-to PID
	// has the id id (a target id that starts with "future$", in a message
	// without a sender), if it was sent to the peer whose identity is from:
	// the peer of the connection the reply arrived on, never a field of the
	// message. ReplyWrongPeer means the ask went to another peer: the reply
	// must be dropped (and counted). The transport checks
	// PendingReply.Accepts before it decodes the reply, and completes the
	// ask with PendingReply.Complete. It allocates nothing for sparkrpc's
	// asks. Deliver ignores replies.
	LookupReply(from string, id []byte) (PendingReply, ReplyStatus)
	// Connected reports a new connection to or from peer.
	Connected(peer Peer)
	// Disconnected reports that the connection to peer closed; every ask
	// pending on that peer fails at once with cause (or "Connection from
	// ADDR closed" when cause is nil).
	Disconnected(peer Peer, cause error)
	// NetworkError reports an error on the connection to peer.
	NetworkError(peer Peer, err error)
	// Undeliverable reports that a message queued with Send could not be
	// sent (the connect failed, the message was too large, ...). An ask fails
	// with err; a one-way message is counted as dropped and logged.
	Undeliverable(target, sender *protoactor.PID, msg proto.Message, err error)
	// AfterProcessed runs fn once the local endpoint whose name is
	// target.Id has processed every message that Deliver handed it before
	// this call (its handler returned, or the message was dropped), or at
	// once when no running endpoint has that name. A transport uses it to
	// bound what one connection has delivered but not yet processed: it
	// reads on only when enough of that has been processed. fn runs on the
	// endpoint's loop and must not block. On a concurrent endpoint
	// (Isolated with ThreadCount > 1) fn runs when the earlier messages have
	// been handed to its handler goroutines.
	AfterProcessed(target *protoactor.PID, fn func())
	// PendingAsks reports the asks of this env that wait for a reply from
	// the peer whose identity is peer: how many, and the sequence number of
	// the newest of them (0 when there is none). Sequence numbers grow with
	// every remote ask the env makes, so a transport that sees the same
	// newest number twice knows that no ask to the peer was made in
	// between. A transport uses it to tell a dead connection (asks
	// outstanding, nothing received) from an idle one, as Spark's
	// TransportChannelHandler does.
	PendingAsks(peer string) (n int, newest uint64)
}

// An Inbox is the queue of one running local endpoint, as a transport
// delivers to it (see TransportHost.Inbox).
type Inbox interface {
	// Post queues in (in.Deferred must be nil), as Deliver would for the
	// endpoint, and reports whether the endpoint took it. It reports false
	// once the endpoint is stopping; the transport then calls Deliver,
	// which finds the endpoint registered under the name now, if any. A
	// message posted is delivered as by Deliver in every other way:
	// AfterProcessed counts it, and it keeps its order behind what was
	// delivered to the endpoint before. Post is for endpoints only: a reply
	// to an ask goes to LookupReply.
	Post(in Inbound) bool
	// PostBatch is Post of every message of batch, in order, under one
	// lock of the endpoint's queue, and one wake-up of the endpoint's
	// loop: all of them are taken, or, once the endpoint is stopping, none
	// (false). A transport that reads many messages for one endpoint at
	// once posts them with PostBatch. The endpoint keeps no reference to
	// batch itself.
	PostBatch(batch []Inbound) bool
	// Accepts reports whether the endpoint takes messages of the type
	// name (see Acceptor). A transport asks before it decodes a message,
	// and refuses one it does not accept: it does not post it, and calls
	// TransportHost.Undeliverable with an error that matches
	// ErrUnsupportedMessage.
	Accepts(name protoreflect.FullName) bool
}

// Inbound is one message a transport hands on (Inbox.Post, PostBatch,
// TransportHost.Deliver): the message, its sender (nil for a one-way
// message) and the peer it came from.
type Inbound struct {
	Sender *protoactor.PID
	Msg    proto.Message
	// From is the identity of the env the message came from (a Peer's
	// Identity): the peer of the connection it was read on, never a field
	// of the message. Endpoints that ask for it (PeerAware) read it with
	// Context.Peer; a transport that leaves it empty makes Peer say
	// UnknownPeer.
	From string
	// Deferred, when not nil, stands for Msg, which is then nil: the
	// endpoint's loop decodes the message just before it handles it. Only
	// PostBatch takes a deferred message.
	Deferred Deferred
}

// A Deferred message is one that a transport posts before it decodes it,
// so that the endpoint's loop, not the connection's reader, copies a large
// payload into the message's own memory while the reader reads on.
type Deferred interface {
	// Decode returns the message. The endpoint's loop calls it once, in
	// the message's turn. When the message cannot be decoded it returns
	// false, having reported why (to the asker of a request, say), and the
	// endpoint does not see it.
	Decode() (proto.Message, bool)
	// Type is the Go type of the message that Decode returns, which the
	// endpoint's count of messages by type takes at once.
	Type() reflect.Type
}

// A Lender is a Deferred message that can also be decoded without a copy,
// for an endpoint that borrows messages (Borrower): the endpoint's loop
// calls Lend instead of Decode.
type Lender interface {
	Deferred
	// Lend returns the message decoded so that its bytes and string fields
	// alias the transport's buffer, and the Loan of that buffer, holding
	// one reference, which the endpoint's loop releases once the handler
	// has returned. A nil Loan means the message owns its memory (the
	// transport copied it, having lent as much as its bound allows). When
	// the message cannot be decoded Lend returns false, as Decode does.
	Lend() (proto.Message, Loan, bool)
}

// A Loan is a transport's buffer lent to the message of a borrowing
// endpoint, reference counted: the transport takes it back when its last
// reference is released. Retain and Release are safe for concurrent use.
type Loan interface {
	// Retain adds a reference.
	Retain()
	// Release drops a reference.
	Release()
}
