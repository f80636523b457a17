// The package's sentinel and typed errors, and their wire form (RpcFailure).

package actor

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
)

// Sentinel errors. Each can be matched with errors.Is, also when the failure
// happened on another env and came back over the wire (see RemoteError).
var (
	// ErrEnvStopped is returned by every operation on an env after Shutdown
	// (and by RegisterEndpoint once shutdown has begun).
	ErrEnvStopped = errors.New("RpcEnv has been stopped")
	// ErrEndpointNotFound matches *EndpointNotFoundError: a message to a name
	// that is not registered, or a failed lookup.
	ErrEndpointNotFound = errors.New("endpoint not found")
	// ErrDuplicateEndpoint matches *DuplicateEndpointError.
	ErrDuplicateEndpoint = errors.New("duplicate endpoint name")
	// ErrUnsupportedMessage is what a handler returns (possibly wrapped) for a
	// message it does not handle. The asker then fails with
	// "Unsupported message TYPE from ADDR".
	ErrUnsupportedMessage = errors.New("unsupported message")
	// ErrNilMessage is returned by Send and Ask for a nil message.
	//lint:ignore ST1005 Spark's text for a null message (Spark users match on it).
	ErrNilMessage = errors.New("Message is null")
	// ErrInvalidName is returned by RegisterEndpoint for an empty or malformed name.
	ErrInvalidName = errors.New("invalid endpoint name")
	// ErrInvalidTimeout is returned for a zero or negative RpcTimeout.
	ErrInvalidTimeout = errors.New("invalid timeout")
	// ErrConnectionClosed matches the failure of asks pending on a
	// connection that closed ("Connection from ADDR closed").
	ErrConnectionClosed = errors.New("connection closed")
	// ErrMessageTooLarge matches a message bigger than spark.rpc.message.maxSize.
	ErrMessageTooLarge = errors.New("message exceeds spark.rpc.message.maxSize")
	// ErrNoTransport is returned for a remote reference on an env without a transport.
	ErrNoTransport = errors.New("env has no transport")
	// ErrInvalidEndpoint is returned by RegisterEndpoint for an endpoint
	// that cannot run as it is: a PeerAware one that is not serial.
	ErrInvalidEndpoint = errors.New("invalid endpoint")
)

// EndpointNotFoundError reports a message to an endpoint name that is not
// registered ("Could not find NAME.") or a lookup that found nothing
// ("Cannot find endpoint: spark://name@host:port").
type EndpointNotFoundError struct {
	// Name is the endpoint name.
	Name string
	// URI is set for a failed lookup.
	URI string
}

func (e *EndpointNotFoundError) Error() string {
	if e.URI != "" {
		return "Cannot find endpoint: " + e.URI
	}
	return "Could not find " + e.Name + "."
}

// Is reports whether target is ErrEndpointNotFound.
func (e *EndpointNotFoundError) Is(target error) bool { return target == ErrEndpointNotFound }

// DuplicateEndpointError reports a second registration under a name.
type DuplicateEndpointError struct{ Name string }

func (e *DuplicateEndpointError) Error() string {
	return "There is already an RpcEndpoint called " + e.Name
}

// Is reports whether target is ErrDuplicateEndpoint.
func (e *DuplicateEndpointError) Is(target error) bool { return target == ErrDuplicateEndpoint }

// UnsupportedMessageError is how an asker sees a message that the endpoint
// did not handle.
type UnsupportedMessageError struct {
	// Type is the message's protobuf full name (or Go type).
	Type string
	// From is the sender's address ("" when local and unknown).
	From string
}

func (e *UnsupportedMessageError) Error() string {
	return "Unsupported message " + e.Type + " from " + e.From
}

// Is reports whether target is ErrUnsupportedMessage.
func (e *UnsupportedMessageError) Is(target error) bool { return target == ErrUnsupportedMessage }

// RpcTimeoutError is a timed-out ask: Spark's RpcTimeoutException. Its text
// names the configuration key that controls the timeout, exactly once.
type RpcTimeoutError struct {
	// Addr is the address the reply was expected from.
	Addr string
	// Duration is the timeout.
	Duration time.Duration
	// Key is the configuration key that set Duration.
	Key string
}

func (e *RpcTimeoutError) Error() string {
	return fmt.Sprintf("Cannot receive any reply from %s in %s. This timeout is controlled by %s", e.Addr, scalaDuration(e.Duration), e.Key)
}

// scalaDuration writes d as Spark's message does, as a Scala FiniteDuration
// prints: in the largest of seconds, milliseconds, microseconds and
// nanoseconds that holds it whole ("120 seconds", "1 second", "10
// milliseconds"). Spark's timeouts from its configuration are in seconds.
func scalaDuration(d time.Duration) string {
	unit, name := time.Nanosecond, "nanosecond"
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Second, "second"}, {time.Millisecond, "millisecond"}, {time.Microsecond, "microsecond"}} {
		if d%u.d == 0 {
			unit, name = u.d, u.name
			break
		}
	}
	if n := int64(d / unit); n != 1 {
		return fmt.Sprintf("%d %ss", n, name)
	}
	return "1 " + name
}

// Timeout reports true, so that a RpcTimeoutError satisfies net.Error-style checks.
func (e *RpcTimeoutError) Timeout() bool { return true }

// Is reports whether target is context.DeadlineExceeded-like: it matches
// ErrTimeout.
func (e *RpcTimeoutError) Is(target error) bool { return target == ErrTimeout }

// ErrTimeout matches every *RpcTimeoutError.
var ErrTimeout = errors.New("rpc timeout")

// PanicError is a panic recovered in a handler; it fails the asker and goes
// to OnError like any other error.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// ReplyTypeError is returned by AskAs when the reply is not of the expected type.
type ReplyTypeError struct {
	Want string
	Got  string
}

func (e *ReplyTypeError) Error() string {
	return "unexpected reply type: want " + e.Want + ", got " + e.Got
}

// MessageTooLargeError is a message bigger than spark.rpc.message.maxSize.
type MessageTooLargeError struct {
	Size  int
	Limit int
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds max allowed: spark.rpc.message.maxSize (%d bytes)", e.Size, e.Limit)
}

// Is reports whether target is ErrMessageTooLarge.
func (e *MessageTooLargeError) Is(target error) bool { return target == ErrMessageTooLarge }

// ConnectionClosedError fails the asks pending on a connection that closed.
type ConnectionClosedError struct {
	Addr  string
	Cause error
}

func (e *ConnectionClosedError) Error() string {
	if e.Cause != nil {
		return "Connection from " + e.Addr + " closed: " + e.Cause.Error()
	}
	return "Connection from " + e.Addr + " closed"
}

// Unwrap returns the cause.
func (e *ConnectionClosedError) Unwrap() error { return e.Cause }

// Is reports whether target is ErrConnectionClosed.
func (e *ConnectionClosedError) Is(target error) bool { return target == ErrConnectionClosed }

// RemoteError is a failure that came back over the wire from another env:
// the error a remote handler returned or passed to SendFailure, or a failure
// of the remote env itself. errors.Is matches it against the sentinel its code
// stands for (ErrEndpointNotFound, ErrUnsupportedMessage, ...).
type RemoteError struct {
	Code    messages.ErrorCode
	Message string
	// Type is the Go type of the remote error.
	Type string
	// Cause is the text of the remote error's cause, when it had one.
	Cause string
	// Subject is what the failure is about: the endpoint name of a
	// NOT_FOUND failure, the message type of an UNSUPPORTED_MESSAGE one.
	Subject string
	// From is the address an unsupported message came from.
	From string
	// Size and Limit are a TOO_LARGE failure's message size and the limit
	// it exceeds, in bytes.
	Size, Limit int64
}

func (e *RemoteError) Error() string { return e.Message }

// As lets errors.As see the typed error the failure's code stands for, as
// an asker of a local endpoint gets it: *EndpointNotFoundError (NOT_FOUND),
// *UnsupportedMessageError (UNSUPPORTED_MESSAGE) and *MessageTooLargeError
// (TOO_LARGE), made from the failure's Subject, From, Size and Limit. Those
// are what the remote env says, as its text is: a failure without them (from
// an env that does not send them) or with sizes that cannot be (a limit not
// above zero, a negative size) matches none. The typed error's text is made
// from its fields; the remote env's own text is e's.
func (e *RemoteError) As(target any) bool {
	switch t := target.(type) {
	case **EndpointNotFoundError:
		if e.Code == messages.ErrorCode_ERROR_CODE_NOT_FOUND && e.Subject != "" {
			*t = &EndpointNotFoundError{Name: e.Subject}
			return true
		}
	case **UnsupportedMessageError:
		if e.Code == messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE && e.Subject != "" {
			*t = &UnsupportedMessageError{Type: e.Subject, From: e.From}
			return true
		}
	case **MessageTooLargeError:
		if e.Code == messages.ErrorCode_ERROR_CODE_TOO_LARGE && e.Limit > 0 && e.Size >= 0 &&
			e.Limit <= math.MaxInt && e.Size <= math.MaxInt {
			*t = &MessageTooLargeError{Size: int(e.Size), Limit: int(e.Limit)}
			return true
		}
	}
	return false
}

// Is maps the failure code to the sentinel errors.
func (e *RemoteError) Is(target error) bool {
	switch e.Code {
	case messages.ErrorCode_ERROR_CODE_NOT_FOUND:
		return target == ErrEndpointNotFound
	case messages.ErrorCode_ERROR_CODE_ENV_STOPPED:
		return target == ErrEnvStopped
	case messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE:
		return target == ErrUnsupportedMessage
	case messages.ErrorCode_ERROR_CODE_TOO_LARGE:
		return target == ErrMessageTooLarge
	case messages.ErrorCode_ERROR_CODE_CONNECTION_CLOSED:
		return target == ErrConnectionClosed
	case messages.ErrorCode_ERROR_CODE_TIMEOUT:
		return target == ErrTimeout
	}
	return false
}

// FailureToProto encodes err for the wire.
func FailureToProto(err error) *messages.RpcFailure {
	var re *RemoteError
	if errors.As(err, &re) {
		return &messages.RpcFailure{Code: re.Code, Message: re.Message, Type: re.Type, Cause: re.Cause,
			Subject: re.Subject, From: re.From, Size: re.Size, Limit: re.Limit}
	}
	f := &messages.RpcFailure{Code: errorCode(err), Message: err.Error(), Type: reflect.TypeOf(err).String()}
	if cause := errors.Unwrap(err); cause != nil {
		f.Cause = cause.Error()
	}
	describeFailure(f, err)
	return f
}

// describeFailure fills in the fields from which the asker rebuilds the
// typed error of f's code (RemoteError.As).
func describeFailure(f *messages.RpcFailure, err error) {
	var (
		nf *EndpointNotFoundError
		ue *UnsupportedMessageError
		tl *MessageTooLargeError
	)
	switch f.Code {
	case messages.ErrorCode_ERROR_CODE_NOT_FOUND:
		if errors.As(err, &nf) {
			f.Subject = nf.Name
		}
	case messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE:
		if errors.As(err, &ue) {
			f.Subject, f.From = ue.Type, ue.From
		}
	case messages.ErrorCode_ERROR_CODE_TOO_LARGE:
		if errors.As(err, &tl) {
			f.Size, f.Limit = int64(tl.Size), int64(tl.Limit)
		}
	}
}

// FailureFromProto decodes a failure that came over the wire.
func FailureFromProto(f *messages.RpcFailure) error {
	return &RemoteError{Code: f.GetCode(), Message: f.GetMessage(), Type: f.GetType(), Cause: f.GetCause(),
		Subject: f.GetSubject(), From: f.GetFrom(), Size: f.GetSize(), Limit: f.GetLimit()}
}

func errorCode(err error) messages.ErrorCode {
	var pe *PanicError
	switch {
	case errors.Is(err, ErrEndpointNotFound):
		return messages.ErrorCode_ERROR_CODE_NOT_FOUND
	case errors.Is(err, ErrEnvStopped):
		return messages.ErrorCode_ERROR_CODE_ENV_STOPPED
	case errors.Is(err, ErrUnsupportedMessage):
		return messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE
	case errors.Is(err, ErrMessageTooLarge):
		return messages.ErrorCode_ERROR_CODE_TOO_LARGE
	case errors.Is(err, ErrConnectionClosed):
		return messages.ErrorCode_ERROR_CODE_CONNECTION_CLOSED
	case errors.Is(err, ErrTimeout):
		return messages.ErrorCode_ERROR_CODE_TIMEOUT
	case errors.As(err, &pe):
		return messages.ErrorCode_ERROR_CODE_PANIC
	}
	return messages.ErrorCode_ERROR_CODE_APPLICATION
}

// ValidateName reports whether name can be an endpoint name: not empty, no
// '/', '@', ':', '$' or white space, and written as it is in its address,
// spark://NAME@host:port, so that the address leads back to it: ASCII
// letters, digits and the characters a URL's user part takes unescaped
// ("-._~!&'()*+,;=", not '%', '?', '#', '[' or ']'). Names with '$' are
// the transports' own: reply futures ("future$...") and control frames
// (netty's "credit$").
func ValidateName(name string) error {
	if name == "" || strings.ContainsAny(name, "/@: \t\r\n") {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if strings.ContainsRune(name, '$') {
		return fmt.Errorf("%w: %q: names with '$' are reserved for reply futures and the transport's control frames", ErrInvalidName, name)
	}
	// The name is the user info of its endpoint's address: it must come
	// back unchanged from "spark://NAME@host:port".
	if a, err := ParseEndpointAddress("spark://" + name + "@h:1"); err != nil || a.Name != name {
		return fmt.Errorf("%w: %q: not valid as is in spark://NAME@host:port", ErrInvalidName, name)
	}
	return nil
}

// ShutdownError is returned by Env.Shutdown when its context ends before
// every endpoint has stopped: by then the env accepts no work, its pending
// asks have failed and its connections are closed, but the endpoints named
// here are still in a handler (or have not reached OnStop). errors.Is
// matches the context's cause (context.DeadlineExceeded, ...).
type ShutdownError struct {
	// Env is the env's name.
	Env string
	// Running lists the endpoints still running, sorted.
	Running []string
	// Err is the cause of the context.
	Err error
}

func (e *ShutdownError) Error() string {
	return fmt.Sprintf("shutdown of RpcEnv %s interrupted (%v) with endpoints still running: %s",
		e.Env, e.Err, strings.Join(e.Running, ", "))
}

// Unwrap returns the cause of the context.
func (e *ShutdownError) Unwrap() error { return e.Err }
