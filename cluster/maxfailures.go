package cluster

import (
	"math"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// MaxExecutorFailures returns spark.executor.maxNumFailures: by default, as
// Spark's ExecutorFailureTracker, max(3, 2 × the executors), where the
// executors are spark.dynamicAllocation.maxExecutors when dynamic
// allocation is on (executors is then only the initial number) and
// executors otherwise.
func MaxExecutorFailures(conf *actor.Conf, executors int) (int, error) {
	on, err := conf.GetBool(endpoints.KeyDynamicAllocationEnabled, false)
	if err != nil {
		return 0, err
	}
	if on {
		if executors, err = conf.GetInt(endpoints.KeyDynamicAllocationMaxExecutors, math.MaxInt32); err != nil {
			return 0, err
		}
	}
	def := math.MaxInt32
	if executors <= math.MaxInt32/2 {
		def = max(3, 2*executors)
	}
	return conf.GetInt(KeyMaxExecutorFailures, def)
}
