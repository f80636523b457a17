package kubeconf

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// As Spark's ExecutorFailureTracker: with dynamic allocation the default
// spark.executor.maxNumFailures is 2 × maxExecutors, not 2 × the initial
// executors (which cluster.Submit writes to spark.executor.instances, 0 by
// default).
// Before, the default was 3.
func TestMaxExecutorFailuresWithDynamicAllocation(t *testing.T) {
	conf := actor.NewConf().Set(KeyContainerImage, "i").Set("spark.dynamicAllocation.enabled", "true").
		Set("spark.dynamicAllocation.maxExecutors", "50").Set(cluster.KeyNumExecutors, "0")
	c, err := Parse(conf, "a")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxExecutorFailures != 100 {
		t.Fatalf("spark.executor.maxNumFailures defaults to %d with maxExecutors 50; want 100", c.MaxExecutorFailures)
	}
}
