package endpoints_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A driver whose executors would heartbeat less often than it waits for
// their heartbeats (spark.executor.heartbeatInterval not below
// spark.network.timeout, or spark.storage.blockManagerHeartbeatTimeoutMs)
// would take every executor for lost between two heartbeats, kill it and
// replace it, forever: NewDriver refuses it, naming both keys, as Spark's
// SparkConf.validateSettings does.
// Before, the driver started and removed healthy executors over and over.
func TestNewDriverRefusesHeartbeatIntervalOverTimeout(t *testing.T) {
	for _, tc := range []struct {
		conf     *actor.Conf
		timeoutK string
	}{
		{actor.NewConf().Set(endpoints.KeyHeartbeatInterval, "200s"), actor.KeyNetworkTimeout},
		{actor.NewConf().Set(endpoints.KeyHeartbeatInterval, "10s").Set(actor.KeyNetworkTimeout, "10s"), actor.KeyNetworkTimeout},
		{actor.NewConf().Set(endpoints.KeyHeartbeatInterval, "10s").Set(endpoints.KeyHeartbeatTimeout, "5000"), endpoints.KeyHeartbeatTimeout},
	} {
		env, err := actor.NewEnv("driver", tc.conf)
		if err != nil {
			t.Fatal(err)
		}
		d, err := endpoints.NewDriver(env)
		if d != nil {
			d.Stop(context.Background())
		}
		env.Shutdown(context.Background())
		if !errors.Is(err, endpoints.ErrInvalidConfig) || !strings.Contains(fmtErr(err), endpoints.KeyHeartbeatInterval) ||
			!strings.Contains(fmtErr(err), tc.timeoutK) {
			t.Errorf("%v: NewDriver = %v, want ErrInvalidConfig naming %s and %s", tc.conf.All(), err, endpoints.KeyHeartbeatInterval, tc.timeoutK)
		}
	}
	// The defaults (10s against 120s) are fine.
	env, err := actor.NewEnv("driver", actor.NewConf())
	if err != nil {
		t.Fatal(err)
	}
	defer env.Shutdown(context.Background())
	d, err := endpoints.NewDriver(env)
	if err != nil {
		t.Fatal(err)
	}
	d.Stop(context.Background())
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
