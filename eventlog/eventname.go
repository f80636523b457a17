// A line's event name, read without decoding the line.

package eventlog

import (
	"bytes"
	"encoding/json"
)

// knownEvent reports whether decode turns lines of event name into events
// (or, SparkListenerLogStart, reads them).
func knownEvent(name []byte) bool {
	switch string(name) {
	case eventLogStart, eventApplicationStart, eventEnvironmentUpdate, eventApplicationEnd, eventExecutorAdded,
		eventExecutorRemoved, eventJobStart, eventJobEnd, eventTaskStart, eventTaskEnd:
		return true
	}
	return false
}

// applicationEvent reports whether event name is one that
// OpenApplicationEvents's Log decodes.
func applicationEvent(name []byte) bool {
	switch string(name) {
	case eventLogStart, eventApplicationStart, eventApplicationEnd:
		return true
	}
	return false
}

// eventName returns the event name of line b as Spark and the Writer write
// it, first: `{"Event":"NAME",...`; ok is false for a line of another shape.
func eventName(b []byte) (name []byte, ok bool) {
	const prefix = `{"Event":"`
	rest, ok := bytes.CutPrefix(b, []byte(prefix))
	if !ok {
		return nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return nil, false
	}
	return rest[:i], true
}

// unknownEvent reports whether line b is of an event decode does not know:
// such a line is ignored without being decoded, whatever its fields (a
// Spark event's may share a name, told apart only by case, with a field
// of ours of another type, as the "timestamp" text of a streaming query's
// events).
func unknownEvent(b []byte) bool {
	name, ok := eventName(b)
	if !ok {
		var ev struct {
			Event string `json:"Event"`
		}
		if json.Unmarshal(b, &ev) != nil {
			return false // decode reports it
		}
		name = []byte(ev.Event)
	}
	return !knownEvent(name)
}
