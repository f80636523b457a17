package endpoints_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// spark.executor.instances larger than maxExecutors: ParseAllocationConfig
// (and InitialExecutors, which cluster.Submit applies before any container
// starts) accept it, so the application is submitted and its executors
// started; the manager the runner then builds from that same configuration
// must not refuse it, and its target must stay within maxExecutors.
// Before, the driver refused its own configuration once the executors ran.
func TestAllocationManagerTakesWhatParseAllocationConfigGives(t *testing.T) {
	conf := testConf(endpoints.KeyDynamicAllocationEnabled, "true",
		endpoints.KeyDynamicAllocationMaxExecutors, "4", "spark.executor.instances", "10")
	n, _, ok, err := endpoints.InitialExecutors(conf)
	if err != nil || !ok {
		t.Fatalf("InitialExecutors = %d, %v, %v", n, ok, err)
	}
	cfg, err := endpoints.ParseAllocationConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	cm := newFakeClusterManager()
	c := startCluster(t, memNetwork(), testConf(), 0, 1, endpoints.WithClusterManager(cm))
	m, err := endpoints.NewExecutorAllocationManager(c.Driver, cfg)
	if err != nil {
		t.Fatalf("the configuration ParseAllocationConfig returned (initial %d, max %d), with which cluster.Submit "+
			"started %d executors, is refused by NewExecutorAllocationManager: %v", cfg.InitialExecutors, cfg.MaxExecutors, n, err)
	}
	if st := m.Status(); st.Target > cfg.MaxExecutors || n > cfg.MaxExecutors {
		t.Fatalf("initial target %d, executors started %d; above maxExecutors %d", st.Target, n, cfg.MaxExecutors)
	}
}
