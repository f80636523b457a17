package eventlog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
)

// Lines of events the package does not know are ignored, as its doc says,
// whatever their fields: a Structured Streaming application's log holds a
// line per query started and, from Spark 3.5, per idle trigger, each with
// a "timestamp" text, which a field of ours ("Timestamp", a number) matched
// but for case. Before, each such line was skipped as unreadable, and every
// page of the application said its log could not all be read.
func TestLinesOfUnknownEventsAreIgnoredWhateverTheirFields(t *testing.T) {
	p := filepath.Join(t.TempDir(), "app-1")
	log := `{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}
{"Event":"SparkListenerApplicationStart","App Name":"stream","App ID":"app-1","Timestamp":1700000000000,"User":"u"}
{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryStartedEvent","id":"8f4c0000-0000-0000-0000-000000000001","runId":"9a1b0000-0000-0000-0000-000000000002","name":null,"timestamp":"2023-11-14T22:13:21.000Z"}
{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryIdleEvent","id":"8f4c0000-0000-0000-0000-000000000001","runId":"9a1b0000-0000-0000-0000-000000000002","timestamp":"2023-11-14T22:13:31.000Z"}
{"Event":"SparkListenerSomethingNew","Job ID":"not a number","Duration":-5,"Task Info":[1,2,3]}
{"Event":"SparkListenerApplicationEnd","Timestamp":1700000002000}
`
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	var c collect
	res, err := eventlog.Replay(p, &c)
	if err != nil || res.Skipped != 0 || res.Events != 2 {
		t.Fatalf("Replay = %+v, %v; want the application's start and end, and no line skipped", res, err)
	}
	if _, ok := c.evs[1].(endpoints.ApplicationEnd); !ok {
		t.Fatalf("events = %#v", c.evs)
	}
	// A last line cut short is still reported, whatever its event.
	if err := os.WriteFile(p, []byte(log+`{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":0,"desc`), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := eventlog.Replay(p, &collect{}); err != nil || res.Skipped != 1 || res.Events != 2 {
		t.Fatalf("Replay of a log cut short = %+v, %v; want its last line reported", res, err)
	}
}
