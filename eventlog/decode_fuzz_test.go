package eventlog

import (
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// FuzzDecode checks that no line makes the decoder panic, and that an
// event it decodes encodes to a line it decodes again.
func FuzzDecode(f *testing.F) {
	var enc encoder
	now := time.UnixMilli(1_700_000_000_000)
	for _, ev := range []endpoints.Event{
		endpoints.ApplicationStart{Time: now, AppID: "a", AppName: "n", DriverLogURLs: map[string]string{"stdout": "u"}},
		endpoints.EnvironmentUpdate{Time: now, Properties: [][2]string{{"k", "v"}}, Runtime: map[string]string{"Go Version": "x"}},
		endpoints.ExecutorAdded{Time: now, ExecutorID: "1", Host: "h", Address: actor.NewRpcAddress("h", 1), Cores: 2},
		endpoints.ExecutorRemoved{Time: now, ExecutorID: "1", Reason: "lost"},
		endpoints.JobStart{Time: now, JobID: 1, TaskName: "t", NumTasks: 3},
		endpoints.TaskStart{Time: now, JobID: 1, TaskID: 2, ExecutorID: "1"},
		endpoints.TaskEnd{Time: now, JobID: 1, TaskID: 2, ExecutorID: "1", State: messages.TaskState_TASK_STATE_LOST, Error: "e"},
		endpoints.ApplicationEnd{Time: now, Error: "x"},
	} {
		f.Add(enc.appendEvent(nil, ev))
	}
	f.Add([]byte(`{"Event":"SparkListenerJobEnd","Job ID":1}`))
	f.Add([]byte(`{"Event":"SparkListenerExecutorAdded","Executor Info":{"RPC Address":"nope"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d decoder
		ev, ok, err := d.decode(b)
		if err != nil || !ok {
			return
		}
		line := enc.appendEvent(nil, ev)
		if _, _, err := d.decode(line); err != nil {
			t.Fatalf("%q decoded as %#v, encoded as %q, which does not decode: %v", b, ev, line, err)
		}
	})
}
