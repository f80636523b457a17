package actor_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// A remote failure is seen as the typed error of its code only when it
// carries what that error is made of, with sizes that can be.
func TestRemoteErrorAsTypedErrorOnlyWithItsFields(t *testing.T) {
	const (
		notFound    = messages.ErrorCode_ERROR_CODE_NOT_FOUND
		unsupported = messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE
		tooLarge    = messages.ErrorCode_ERROR_CODE_TOO_LARGE
	)
	for _, tc := range []struct {
		name string
		f    *messages.RpcFailure
		want bool
	}{
		{"not found", &messages.RpcFailure{Code: notFound, Subject: "x"}, true},
		{"not found without the name", &messages.RpcFailure{Code: notFound}, false},
		{"unsupported", &messages.RpcFailure{Code: unsupported, Subject: "T", From: "h:1"}, true},
		{"unsupported without the type", &messages.RpcFailure{Code: unsupported, From: "h:1"}, false},
		{"too large", &messages.RpcFailure{Code: tooLarge, Size: 10, Limit: 5}, true},
		{"too large without the limit", &messages.RpcFailure{Code: tooLarge, Size: 10}, false},
		{"too large, negative size", &messages.RpcFailure{Code: tooLarge, Size: -5, Limit: 5}, false},
		{"too large, negative limit", &messages.RpcFailure{Code: tooLarge, Size: 5, Limit: -1}, false},
	} {
		err := actor.FailureFromProto(tc.f)
		var (
			nf *actor.EndpointNotFoundError
			ue *actor.UnsupportedMessageError
			tl *actor.MessageTooLargeError
		)
		got := errors.As(err, &nf) || errors.As(err, &ue) || errors.As(err, &tl)
		if got != tc.want {
			t.Errorf("%s: errors.As found a typed error: %v, want %v", tc.name, got, tc.want)
		}
	}
	// The code's sentinel matches whatever the fields.
	if err := actor.FailureFromProto(&messages.RpcFailure{Code: tooLarge}); !errors.Is(err, actor.ErrMessageTooLarge) {
		t.Errorf("a TOO_LARGE failure without sizes: errors.Is ErrMessageTooLarge = false")
	}
}
