// What counts as no message: nil, a typed nil, or an invalid message.

package actor

import "google.golang.org/protobuf/proto"

// isNilMessage reports whether m is nil, a typed nil or otherwise not a
// valid message (dynamicpb's zero value, a value that embeds a nil
// message), as Ref.Send and Ref.Ask check their message.
func isNilMessage(m proto.Message) bool {
	return m == nil || !m.ProtoReflect().IsValid()
}
