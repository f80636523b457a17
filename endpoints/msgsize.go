package endpoints

// This file holds a cheap bound on the encoded size of LaunchTask and
// StatusUpdate: every task checks both against spark.rpc.message.maxSize,
// and the exact size (proto.Size, a walk of the message) is computed only
// for a message that the bound says may reach the limit.

import (
	"encoding/binary"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

var (
	launchTaskOverhead   = fieldsOverhead(&messages.LaunchTask{})
	statusUpdateOverhead = fieldsOverhead(&messages.StatusUpdate{})
)

// fieldsOverhead is the most that the fields of m's type take beside the
// bytes of their strings and byte strings: each field's tag and one varint
// of at most 10 bytes (its value, or its length). It is a bound for
// messages of singular scalar, string and bytes fields only, which the
// tests check of LaunchTask and StatusUpdate.
func fieldsOverhead(m proto.Message) int {
	fields := m.ProtoReflect().Descriptor().Fields()
	n := 0
	for i := range fields.Len() {
		n += protowire.SizeTag(fields.Get(i).Number()) + binary.MaxVarintLen64
	}
	return n
}

// launchTaskTooLarge returns m's encoded size and true when it reaches
// limit bytes; it computes the size only when the bound says it may.
func launchTaskTooLarge(m *messages.LaunchTask, limit int) (int, bool) {
	if launchTaskOverhead+len(m.TaskName)+len(m.Payload) < limit {
		return 0, false
	}
	size := proto.Size(m)
	return size, size >= limit
}

// statusUpdateTooLarge returns u's encoded size and true when it reaches
// limit bytes; it computes the size only when the bound says it may.
func statusUpdateTooLarge(u *messages.StatusUpdate, limit int) (int, bool) {
	if statusUpdateOverhead+len(u.ExecutorId)+len(u.Result)+len(u.Error) < limit {
		return 0, false
	}
	size := proto.Size(u)
	return size, size >= limit
}
