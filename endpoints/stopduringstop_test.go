package endpoints_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// Driver.Stop called by a program while a job runs posts that job's JobEnd
// (ErrDriverStopped); a listener that stops the driver on a failed JobEnd
// then calls Stop too, on the bus goroutine, while the first Stop waits for
// that bus. Neither may wait for the other: the first Stop returns without
// error well before its deadline, and so does the listener's. Before,
// each waited for the other until the first Stop's deadline.
func TestStopFromListenerWhileStopping(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	key, _ := gates.New(t)
	fromListener := make(chan error, 1)
	var once sync.Once
	c.Driver.AddListener(endpoints.ListenerFunc(func(ev endpoints.Event) {
		if e, ok := ev.(endpoints.JobEnd); ok && e.Err != nil {
			once.Do(func() { fromListener <- c.Driver.Stop(context.Background()) })
		}
	}))
	jobDone := make(chan error, 1)
	go func() {
		_, err := c.Driver.RunJob(context.Background(), "test.gated", gatedPayloads(key, 1))
		jobDone <- err
	}()
	c.rec.waitFor(t, "TaskStart", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Driver.Stop(ctx); err != nil {
		t.Errorf("Stop while a listener stops the driver too = %v", err)
	}
	if err := <-fromListener; err != nil {
		t.Errorf("Stop from the listener = %v", err)
	}
	<-jobDone
}
