package cluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

type countingControl struct{ kills int }

func (c *countingControl) RequestTotalExecutors(context.Context, int) error { return nil }
func (c *countingControl) KillExecutors(context.Context, []string) error {
	c.kills++
	return nil
}

// As Spark's SparkContext.killExecutors: with dynamic allocation on, the
// application may not kill executors (the driver's allocation manager owns
// their number, and the kill would lower the application master's target
// behind its back, below minExecutors for good).
// Before, the kill was sent.
func TestAppContextKillExecutorsRefusedWithDynamicAllocation(t *testing.T) {
	ctl := &countingControl{}
	conf := actor.NewConf().Set(endpoints.KeyDynamicAllocationEnabled, "true").Set(endpoints.KeyDynamicAllocationMinExecutors, "2")
	sc := cluster.NewAppContext("app", conf, zerolog.Nop(), nil, func(context.Context) (cluster.Started, error) {
		return cluster.Started{Executors: ctl}, nil
	})
	if _, err := sc.Driver(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := sc.KillExecutors(context.Background(), "1")
	if !errors.Is(err, endpoints.ErrDynamicAllocation) || ctl.kills != 0 {
		t.Fatalf("KillExecutors with dynamic allocation on: %v, %d kills sent; want ErrDynamicAllocation and none", err, ctl.kills)
	}
}
