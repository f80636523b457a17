// The errors a Transport returns from Send and reports to its env.

package netty

import (
	"errors"
	"fmt"

	"github.com/sparkrpc/sparkrpc/actor"
)

// EncodeError is a message that could not be marshalled. A reply that cannot
// be marshalled fails its asker with an RpcFailure of code ENCODE instead.
type EncodeError struct {
	Type string
	Err  error
}

func (e *EncodeError) Error() string {
	return "netty: cannot encode message of type " + e.Type + ": " + e.Err.Error()
}

// Unwrap returns the marshalling error.
func (e *EncodeError) Unwrap() error { return e.Err }

// ErrTransportClosed is returned by Send after Shutdown.
var ErrTransportClosed = errors.New("netty: transport is shut down")

// ErrQueueFull matches a *QueueFullError.
var ErrQueueFull = errors.New("netty: outbound queue full")

// QueueFullError is returned by Send (and so fails an Ask at once) when the
// bytes queued for a peer and not yet written to its socket, with the new
// message, would exceed spark.rpc.io.maxQueuedBytesPerConnection: the peer
// reads slower than this env sends, or not at all. Nothing was queued.
type QueueFullError struct {
	Peer   string // the peer's identity
	Queued int64  // bytes queued for the peer
	Size   int64  // bytes of the refused message's frame
	Limit  int64  // the configured bound
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("netty: cannot queue a message of %d bytes for %s: %d bytes already queued, over %s (%d bytes)",
		e.Size, e.Peer, e.Queued, KeyMaxQueuedBytes, e.Limit)
}

// Is reports whether target is ErrQueueFull.
func (e *QueueFullError) Is(target error) bool { return target == ErrQueueFull }

// RefusedTypeError is a message that was not decoded because its target
// does not take its type: an endpoint whose accepted types do not include
// it (actor.Acceptor, actor.Router), or an ask that expects another reply
// type (actor.AskAs). The asker gets it as an RpcFailure.
type RefusedTypeError struct {
	Type   string // the message's type
	Target string // the endpoint or reply id it was sent to
	From   string // the identity of the peer that sent it
}

// Error begins as the local refusal does (actor.UnsupportedMessageError),
// so that the asker reads the same text whichever env refused its message.
func (e *RefusedTypeError) Error() string {
	return fmt.Sprintf("Unsupported message %s from %s: %s does not take it", e.Type, e.From, e.Target)
}

// Unwrap returns actor.ErrUnsupportedMessage, so that the asker's failure
// has the code UNSUPPORTED_MESSAGE.
func (e *RefusedTypeError) Unwrap() error { return actor.ErrUnsupportedMessage }

// As lets errors.As see the refusal as the local one,
// *actor.UnsupportedMessageError, so that the asker gets its type and
// sender whichever env refused its message.
func (e *RefusedTypeError) As(target any) bool {
	if t, ok := target.(**actor.UnsupportedMessageError); ok {
		*t = &actor.UnsupportedMessageError{Type: e.Type, From: e.From}
		return true
	}
	return false
}
