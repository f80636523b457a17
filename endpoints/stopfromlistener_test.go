package endpoints_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A job cancelled from a listener's callback (on its first TaskStart)
// returns the cancel's cause, and the next job runs.
func TestCancelFromListener(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	key, _ := gates.New(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("listener says stop")
	var once sync.Once
	c.Driver.AddListener(endpoints.ListenerFunc(func(ev endpoints.Event) {
		if _, ok := ev.(endpoints.TaskStart); ok {
			once.Do(func() { cancel(why) })
		}
	}))
	if _, err := c.Driver.RunJob(ctx, "test.gated", gatedPayloads(key, 3)); !errors.Is(err, why) {
		t.Fatalf("RunJob = %v", err)
	}
	if res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("x")}); err != nil || string(res[0]) != "x" {
		t.Fatalf("next job = %q, %v", res, err)
	}
}

// Stopping the driver from a listener's callback (on a failed JobEnd, say)
// returns at once: it must not wait for the bus goroutine it runs on. (With
// context.Background() it used to hang for ever, and every later Stop with
// it, behind the sync.Once; the test gives it a deadline so that it fails
// rather than hangs.)
func TestStopFromListener(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	stopped := make(chan error, 1)
	var once sync.Once
	c.Driver.AddListener(endpoints.ListenerFunc(func(ev endpoints.Event) {
		if _, ok := ev.(endpoints.JobEnd); ok {
			once.Do(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				stopped <- c.Driver.Stop(ctx)
			})
		}
	}))
	if _, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("x")}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Stop from a listener = %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Stop called from a listener did not return")
	}
}
