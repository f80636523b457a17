// FitFailure: making a failure valid UTF-8 and small enough to cross the wire.

package actor

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// Markers that FitFailure appends to a text it had to change, so that the
// asker can tell that what it reads is not the whole original text.
const (
	// InvalidUTF8Marker ends a failure text whose invalid UTF-8 bytes were
	// replaced by U+FFFD (protobuf strings must be valid UTF-8).
	InvalidUTF8Marker = " [invalid UTF-8 replaced]"
	// TruncatedMarker ends a failure text that was cut to fit
	// spark.rpc.message.maxSize; it is followed by the original length.
	TruncatedMarker = " [truncated to fit " + KeyMessageMaxSize + "; was %d bytes]"
)

// FitFailure returns a failure that can always be sent in at most limit
// bytes: its texts made valid UTF-8 and, when the whole failure is larger
// than limit, its subject and sender dropped (the message's text names
// them) and its longest texts cut (at a character boundary), each change
// marked with InvalidUTF8Marker or TruncatedMarker; when not even that fits,
// the code and sizes alone. It returns f itself when nothing had to change,
// otherwise a copy (unknown fields included). A transport uses it so that a
// failed ask always reaches its asker, however the handler failed.
func FitFailure(f *messages.RpcFailure, limit int) *messages.RpcFailure {
	if f == nil {
		return f
	}
	out := f
	fields := func(m *messages.RpcFailure) [5]*string {
		return [5]*string{&m.Message, &m.Type, &m.Cause, &m.Subject, &m.From}
	}
	own := func() {
		if out == f {
			out = f.CloneVT()
		}
	}
	for i, s := range fields(f) {
		if !utf8.ValidString(*s) {
			own()
			*fields(out)[i] = ValidText(*s)
		}
	}
	if proto.Size(out) <= limit {
		return out
	}
	// Too large: the cause may keep a quarter of the limit and the type an
	// eighth; the message, the text the asker reads first, keeps the rest.
	// When even that does not fit, the cause and the type give way.
	own()
	// The subject and the sender are in the message's text as well.
	out.Subject, out.From = "", ""
	cut(&out.Cause, limit/4)
	cut(&out.Type, limit/8)
	cut(&out.Message, len(out.Message)-(proto.Size(out)-limit))
	cut(&out.Cause, len(out.Cause)-(proto.Size(out)-limit))
	cut(&out.Type, len(out.Type)-(proto.Size(out)-limit))
	if proto.Size(out) > limit {
		// Not even the code fits with a text: send the code alone, with
		// the sizes when they fit.
		alone := &messages.RpcFailure{Code: f.Code, Size: f.Size, Limit: f.Limit}
		if proto.Size(alone) > limit {
			alone.Size, alone.Limit = 0, 0
		}
		return alone
	}
	return out
}

// cut shortens *s to at most n bytes as FitText does, leaving room for the
// shorter length prefix, which may differ by a few bytes.
func cut(s *string, n int) {
	if len(*s) <= n {
		return
	}
	*s = cutText(*s, n-binaryVarintMax)
}

// ValidText returns s with its invalid UTF-8 replaced by U+FFFD and marked
// with InvalidUTF8Marker (a protobuf string must be valid UTF-8: a message
// that holds one that is not cannot be sent), or s itself when it is valid.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD") + InvalidUTF8Marker
}

// FitText returns s made valid (ValidText) and cut, at a character
// boundary, to at most n bytes, the TruncatedMarker it then ends with
// included; "" when not even the marker fits. An error's text that goes
// into a message (a task's error, a kill's reason) can then always be sent.
func FitText(s string, n int) string { return cutText(ValidText(s), n) }

// cutText is FitText of a valid s.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	marker := fmt.Sprintf(TruncatedMarker, len(s))
	keep := n - len(marker)
	if keep <= 0 {
		return ""
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + marker
}

// binaryVarintMax is the longest varint of a field length.
const binaryVarintMax = 10
