package eventlog_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
)

// A driver's events written as a log (in the driver, the Writer is one of
// its listeners: endpoints.WithListener), then read back, as a history
// server does.
func Example() {
	dir, _ := os.MkdirTemp("", "events")
	defer os.RemoveAll(dir)
	w := eventlog.NewWriter(eventlog.Config{Dir: dir, Compress: true})
	if err := w.Start("app-20250101000000-0001", ""); err != nil {
		fmt.Println(err)
		return
	}
	now := time.Now()
	for _, ev := range []endpoints.Event{
		endpoints.ApplicationStart{Time: now, AppID: "app-20250101000000-0001", AppName: "Pi", User: "ann"},
		endpoints.JobStart{Time: now, JobID: 1, TaskName: "pi", NumTasks: 2},
		endpoints.JobEnd{Time: now, JobID: 1},
		endpoints.ApplicationEnd{Time: now},
	} {
		w.OnEvent(ev)
	}
	if err := w.Close(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	logs, _ := eventlog.List(dir)
	for _, in := range logs {
		fmt.Println(in.AppID, "in progress:", in.InProgress, "compressed:", in.Compressed)
		res, err := eventlog.Replay(in.Path, endpoints.ListenerFunc(func(ev endpoints.Event) {
			fmt.Printf("%T\n", ev)
		}))
		fmt.Println(res.Events, "events,", res.Skipped, "skipped,", err)
	}
	// Output:
	// app-20250101000000-0001 in progress: false compressed: true
	// endpoints.ApplicationStart
	// endpoints.JobStart
	// endpoints.JobEnd
	// endpoints.ApplicationEnd
	// 4 events, 0 skipped, <nil>
}
