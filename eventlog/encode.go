// This file holds the encoding of events as JSON lines: hand-written
// appends, no reflection, so that the listener bus pays little for them.

package eventlog

import (
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Spark's event names, the "Event" field of each line.
const (
	eventLogStart          = "SparkListenerLogStart"
	eventApplicationStart  = "SparkListenerApplicationStart"
	eventEnvironmentUpdate = "SparkListenerEnvironmentUpdate"
	eventApplicationEnd    = "SparkListenerApplicationEnd"
	eventExecutorAdded     = "SparkListenerExecutorAdded"
	eventExecutorRemoved   = "SparkListenerExecutorRemoved"
	eventJobStart          = "SparkListenerJobStart"
	eventJobEnd            = "SparkListenerJobEnd"
	eventTaskStart         = "SparkListenerTaskStart"
	eventTaskEnd           = "SparkListenerTaskEnd"
)

// Spark's task end reasons ("Task End Reason"."Reason") by task state.
const (
	reasonSuccess      = "Success"
	reasonException    = "ExceptionFailure"
	reasonKilled       = "TaskKilled"
	reasonExecutorLost = "ExecutorLostFailure"
)

// encoder appends events as lines. It remembers each executor's host
// (from ExecutorAdded) to write it in the tasks' "Task Info".
type encoder struct {
	hosts map[string]string
}

// appendLogStart appends the SparkListenerLogStart line.
func appendLogStart(b []byte, version string) []byte {
	b = append(b, `{"Event":"`+eventLogStart+`","Spark Version":`...)
	b = appendString(b, version)
	return append(b, "}\n"...)
}

// appendEvent appends ev's line to b; an event it does not know leaves b
// as it is.
func (e *encoder) appendEvent(b []byte, ev endpoints.Event) []byte {
	switch ev := ev.(type) {
	case endpoints.TaskStart:
		return e.appendTaskStart(b, ev)
	case endpoints.TaskEnd:
		return e.appendTaskEnd(b, ev)
	case endpoints.JobStart:
		b = append(b, `{"Event":"`+eventJobStart+`","Job ID":`...)
		b = appendInt(b, ev.JobID)
		b = appendMillisField(b, "Submission Time", ev.Time)
		b = append(b, `,"Task Name":`...)
		b = appendString(b, ev.TaskName)
		b = append(b, `,"Number of Tasks":`...)
		b = appendInt(b, int64(ev.NumTasks))
		return append(b, "}\n"...)
	case endpoints.JobEnd:
		b = append(b, `{"Event":"`+eventJobEnd+`","Job ID":`...)
		b = appendInt(b, ev.JobID)
		b = appendMillisField(b, "Completion Time", ev.Time)
		b = append(b, `,"Duration":`...)
		b = appendInt(b, ev.Duration.Milliseconds())
		if ev.Err == nil {
			return append(b, `,"Job Result":{"Result":"JobSucceeded"}}`+"\n"...)
		}
		b = append(b, `,"Job Result":{"Result":"JobFailed","Exception":{"Message":`...)
		b = appendString(b, ev.Err.Error())
		return append(b, "}}}\n"...)
	case endpoints.ExecutorAdded:
		return e.appendExecutorAdded(b, ev)
	case endpoints.ExecutorRemoved:
		b = append(b, `{"Event":"`+eventExecutorRemoved+`"`...)
		b = appendMillisField(b, "Timestamp", ev.Time)
		b = append(b, `,"Executor ID":`...)
		b = appendString(b, ev.ExecutorID)
		b = append(b, `,"Removed Reason":`...)
		b = appendString(b, ev.Reason)
		return append(b, "}\n"...)
	case endpoints.ApplicationStart:
		return appendApplicationStart(b, ev)
	case endpoints.EnvironmentUpdate:
		return appendEnvironmentUpdate(b, ev)
	case endpoints.ApplicationEnd:
		b = append(b, `{"Event":"`+eventApplicationEnd+`"`...)
		b = appendMillisField(b, "Timestamp", ev.Time)
		if ev.Error != "" {
			b = append(b, `,"Error":`...)
			b = appendString(b, ev.Error)
		}
		return append(b, "}\n"...)
	}
	return b
}

func (e *encoder) appendExecutorAdded(b []byte, ev endpoints.ExecutorAdded) []byte {
	if e.hosts == nil {
		e.hosts = map[string]string{}
	}
	e.hosts[ev.ExecutorID] = ev.Host
	b = append(b, `{"Event":"`+eventExecutorAdded+`"`...)
	b = appendMillisField(b, "Timestamp", ev.Time)
	b = append(b, `,"Executor ID":`...)
	b = appendString(b, ev.ExecutorID)
	b = append(b, `,"Executor Info":{"Host":`...)
	b = appendString(b, ev.Host)
	b = append(b, `,"Total Cores":`...)
	b = appendInt(b, int64(ev.Cores))
	b = append(b, `,"Log Urls":`...)
	b = appendStringMap(b, ev.LogURLs)
	if len(ev.Attributes) > 0 {
		b = append(b, `,"Attributes":`...)
		b = appendStringMap(b, ev.Attributes)
	}
	if !ev.Address.IsZero() {
		b = append(b, `,"RPC Address":`...)
		b = appendString(b, ev.Address.HostPort())
	}
	return append(b, "}}\n"...)
}

func (e *encoder) appendTaskStart(b []byte, ev endpoints.TaskStart) []byte {
	b = append(b, `{"Event":"`+eventTaskStart+`","Job ID":`...)
	b = appendInt(b, ev.JobID)
	b = e.appendTaskInfo(b, ev.TaskID, ev.Partition, ev.Attempt, ev.ExecutorID, ev.Time, time.Time{}, "")
	return append(b, "}\n"...)
}

func (e *encoder) appendTaskEnd(b []byte, ev endpoints.TaskEnd) []byte {
	b = append(b, `{"Event":"`+eventTaskEnd+`","Job ID":`...)
	b = appendInt(b, ev.JobID)
	reason := taskEndReason(ev.State)
	b = append(b, `,"Task End Reason":{"Reason":"`...)
	b = append(b, reason...)
	b = append(b, '"')
	switch reason {
	case reasonException:
		b = append(b, `,"Class Name":"sparkrpc.TaskFailed","Description":`...)
		b = appendString(b, ev.Error)
	case reasonKilled:
		b = append(b, `,"Kill Reason":`...)
		b = appendString(b, ev.Error)
	case reasonExecutorLost:
		b = append(b, `,"Executor ID":`...)
		b = appendString(b, ev.ExecutorID)
		b = append(b, `,"Loss Reason":`...)
		b = appendString(b, ev.Error)
	}
	b = append(b, '}')
	b = e.appendTaskInfo(b, ev.TaskID, ev.Partition, ev.Attempt, ev.ExecutorID, ev.Time.Add(-ev.Duration), ev.Time, reason)
	b = append(b, `,"Task Metrics":{"Executor Run Time":`...)
	b = appendInt(b, ev.RunTime.Milliseconds())
	b = append(b, `,"Result Size":`...)
	b = appendInt(b, ev.ResultSize)
	return append(b, "}}\n"...)
}

// appendTaskInfo appends the "Task Info" field; finish is zero for a task
// that has not ended.
func (e *encoder) appendTaskInfo(b []byte, tid int64, partition, attempt int, exec string, launch, finish time.Time, reason string) []byte {
	b = append(b, `,"Task Info":{"Task ID":`...)
	b = appendInt(b, tid)
	b = append(b, `,"Index":`...)
	b = appendInt(b, int64(partition))
	b = append(b, `,"Attempt":`...)
	b = appendInt(b, int64(attempt))
	b = append(b, `,"Partition ID":`...)
	b = appendInt(b, int64(partition))
	b = appendMillisField(b, "Launch Time", launch)
	b = append(b, `,"Executor ID":`...)
	b = appendString(b, exec)
	b = append(b, `,"Host":`...)
	b = appendString(b, e.hosts[exec])
	b = append(b, `,"Speculative":false`...)
	if finish.IsZero() {
		b = append(b, `,"Finish Time":0`...)
	} else {
		b = appendMillisField(b, "Finish Time", finish)
	}
	b = append(b, `,"Failed":`...)
	b = strconv.AppendBool(b, reason == reasonException || reason == reasonExecutorLost)
	b = append(b, `,"Killed":`...)
	b = strconv.AppendBool(b, reason == reasonKilled)
	return append(b, '}')
}

// taskEndReason returns Spark's reason for a task's final state.
func taskEndReason(s messages.TaskState) string {
	switch s {
	case messages.TaskState_TASK_STATE_FINISHED:
		return reasonSuccess
	case messages.TaskState_TASK_STATE_KILLED:
		return reasonKilled
	case messages.TaskState_TASK_STATE_LOST:
		return reasonExecutorLost
	}
	return reasonException
}

func appendApplicationStart(b []byte, ev endpoints.ApplicationStart) []byte {
	b = append(b, `{"Event":"`+eventApplicationStart+`","App Name":`...)
	b = appendString(b, ev.AppName)
	b = append(b, `,"App ID":`...)
	b = appendString(b, ev.AppID)
	b = appendMillisField(b, "Timestamp", ev.Time)
	b = append(b, `,"User":`...)
	b = appendString(b, ev.User)
	if ev.AttemptID != "" {
		b = append(b, `,"App Attempt ID":`...)
		b = appendString(b, ev.AttemptID)
	}
	b = append(b, `,"Driver Host Port":`...)
	b = appendString(b, ev.DriverHostPort)
	if len(ev.DriverLogURLs) > 0 {
		b = append(b, `,"Driver Logs":`...)
		b = appendStringMap(b, ev.DriverLogURLs)
	}
	return append(b, "}\n"...)
}

func appendEnvironmentUpdate(b []byte, ev endpoints.EnvironmentUpdate) []byte {
	b = append(b, `{"Event":"`+eventEnvironmentUpdate+`"`...)
	b = appendMillisField(b, "Timestamp", ev.Time)
	b = append(b, `,"Runtime Information":`...)
	b = appendStringMap(b, ev.Runtime)
	b = append(b, `,"Spark Properties":{`...)
	for i, kv := range ev.Properties {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, kv[0])
		b = append(b, ':')
		b = appendString(b, kv[1])
	}
	return append(b, "}}\n"...)
}

// appendMillisField appends `,"name":<t in epoch milliseconds>`, 0 for
// a zero t (unknown, as the reader takes 0).
func appendMillisField(b []byte, name string, t time.Time) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	if t.IsZero() {
		return append(b, '0')
	}
	return appendInt(b, t.UnixMilli())
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendStringMap appends m as a JSON object, its keys sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: '"', '\\' and control
// characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
