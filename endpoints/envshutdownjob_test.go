package endpoints_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A job running when the driver's env shuts down (without Driver.Stop)
// ends with ErrDriverStopped (or ErrEnvStopped) instead of leaving RunJob waiting forever:
// no executor can ever run its tasks once the driver's endpoints are gone.
// Before, RunJob waited until Driver.Stop, for ever if nobody called it.
func TestRunJobEndsWhenDriverEnvShutsDown(t *testing.T) {
	nw := memNetwork()
	env := nw.driverEnv(t, testConf())
	rec := newRecorder()
	d, err := endpoints.NewDriver(env, endpoints.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop(context.Background()) //nolint:errcheck
	done := make(chan error, 1)
	go func() {
		_, err := d.RunJob(context.Background(), endpoints.EchoTaskName, [][]byte{[]byte("a")})
		done <- err
	}()
	rec.waitFor(t, "JobStart", func(evs []endpoints.Event) bool { return countEvents[endpoints.JobStart](evs, nil) == 1 })
	if err := env.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		// ErrEnvStopped when RunJob had not yet sent its ReviveOffers.
		if !errors.Is(err, endpoints.ErrDriverStopped) && !errors.Is(err, actor.ErrEnvStopped) {
			t.Fatalf("RunJob = %v, want ErrDriverStopped", err)
		}
	case <-timer.C:
		_ = d.Stop(context.Background()) // lets RunJob return
		<-done
		t.Fatalf("RunJob still waiting %v after its driver's env shut down", testTimeout)
	}
}
