package endpoints_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

func TestStopExecutorsStopsEveryExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(), 3, 1)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := actor.AskAs[*messages.BoolReply](ctx, c.Driver.Ref(), &messages.StopExecutors{}); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, testTimeout, "every executor returned", func() bool { return len(c.ExecutorErrors()) == 3 })
		for id, err := range c.ExecutorErrors() {
			if err != nil {
				t.Errorf("executor %s: %v; want a clean stop", id, err)
			}
		}
		if err := c.Driver.WaitForExecutorsGone(ctx, "1", "2", "3"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDriverStopStopsExecutorsAndJobs(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 2, 1)
	key, _ := gates.New(t)
	errc := make(chan error, 1)
	go func() {
		_, err := runJob(t, c.Driver, "test.gated", gatedPayloads(key, 2))
		errc <- err
	}()
	c.rec.waitFor(t, "tasks running", func(evs []endpoints.Event) bool { return countEvents[endpoints.TaskStart](evs, nil) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, endpoints.ErrDriverStopped) {
		t.Fatalf("running job = %v; want ErrDriverStopped", err)
	}
	if _, err := c.Driver.RunJob(ctx, endpoints.NoopTaskName, [][]byte{nil}); !errors.Is(err, endpoints.ErrDriverStopped) {
		t.Fatalf("RunJob after Stop = %v", err)
	}
	if errs := c.ExecutorErrors(); len(errs) != 2 || errs["1"] != nil || errs["2"] != nil {
		t.Fatalf("executors returned %v; want two clean stops", errs)
	}
}
