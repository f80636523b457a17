package eventlog

import (
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A line whose count, id, size or time no log of a real application has
// is refused, so that a reader never sizes anything from it.
func TestDecodeRefusesHostileFields(t *testing.T) {
	for name, l := range map[string]string{
		"negative task count": `{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":1,"Number of Tasks":-1}`,
		"absurd task count":   `{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":1,"Number of Tasks":2000000000}`,
		"negative job id":     `{"Event":"SparkListenerJobStart","Job ID":-1,"Submission Time":1,"Number of Tasks":1}`,
		"negative time":       `{"Event":"SparkListenerExecutorAdded","Timestamp":-8000000000000000,"Executor ID":"1","Executor Info":{"Host":"h"}}`,
		"negative cores":      `{"Event":"SparkListenerExecutorAdded","Timestamp":1,"Executor ID":"1","Executor Info":{"Host":"h","Total Cores":-2}}`,
		"negative task id":    `{"Event":"SparkListenerTaskStart","Job ID":1,"Task Info":{"Task ID":-3,"Index":0,"Attempt":0,"Launch Time":1}}`,
		"negative index":      `{"Event":"SparkListenerTaskStart","Job ID":1,"Task Info":{"Task ID":3,"Index":-1,"Attempt":0,"Launch Time":1}}`,
		"absurd index":        `{"Event":"SparkListenerTaskStart","Job ID":1,"Task Info":{"Task ID":3,"Index":2000000000,"Attempt":0,"Launch Time":1}}`,
		"negative attempt":    `{"Event":"SparkListenerTaskStart","Job ID":1,"Task Info":{"Task ID":3,"Index":0,"Attempt":-1,"Launch Time":1}}`,
		"finish before launch": `{"Event":"SparkListenerTaskEnd","Job ID":1,"Task End Reason":{"Reason":"Success"},` +
			`"Task Info":{"Task ID":3,"Index":0,"Attempt":0,"Launch Time":10,"Finish Time":5}}`,
		"negative result size": `{"Event":"SparkListenerTaskEnd","Job ID":1,"Task End Reason":{"Reason":"Success"},` +
			`"Task Info":{"Task ID":3,"Index":0,"Attempt":0,"Launch Time":1,"Finish Time":5},"Task Metrics":{"Result Size":-8}}`,
		"negative run time": `{"Event":"SparkListenerTaskEnd","Job ID":1,"Task End Reason":{"Reason":"Success"},` +
			`"Task Info":{"Task ID":3,"Index":0,"Attempt":0,"Launch Time":1,"Finish Time":5},"Task Metrics":{"Executor Run Time":-8}}`,
		"negative job duration": `{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":5,"Duration":-4,"Job Result":{"Result":"JobSucceeded"}}`,
	} {
		var d decoder
		ev, ok, err := d.decode([]byte(l))
		if !errors.Is(err, ErrOutOfRange) {
			t.Errorf("%s: decode = %#v, %v, %v; want an error wrapping ErrOutOfRange", name, ev, ok, err)
		}
	}
}

// A time a line does not have (or has as 0) is unknown, the zero
// time.Time, not 1970; a task's duration is unknown without both times.
func TestDecodeMissingTimesAreUnknown(t *testing.T) {
	var d decoder
	ev, ok, err := d.decode([]byte(`{"Event":"SparkListenerExecutorAdded","Executor ID":"1","Executor Info":{"Host":"h"}}`))
	if err != nil || !ok || !ev.(endpoints.ExecutorAdded).Time.IsZero() {
		t.Fatalf("ExecutorAdded without Timestamp = %#v, %v, %v; want a zero Time", ev, ok, err)
	}
	ev, ok, err = d.decode([]byte(`{"Event":"SparkListenerTaskEnd","Job ID":1,"Task End Reason":{"Reason":"Success"},` +
		`"Task Info":{"Task ID":3,"Index":0,"Attempt":0,"Finish Time":5}}`))
	if err != nil || !ok || ev.(endpoints.TaskEnd).Duration != 0 || ev.(endpoints.TaskEnd).Time != time.UnixMilli(5) {
		t.Fatalf("TaskEnd without Launch Time = %#v, %v, %v; want its finish and no duration", ev, ok, err)
	}
	// The encoder writes an unknown time as 0, so that it reads back unknown.
	var enc encoder
	line := enc.appendEvent(nil, endpoints.ExecutorRemoved{ExecutorID: "1"})
	if ev, _, err := d.decode(line); err != nil || !ev.(endpoints.ExecutorRemoved).Time.IsZero() {
		t.Fatalf("%s read back as %#v, %v", line, ev, err)
	}
}
