package appmaster

import (
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// With dynamic allocation the AM starts with the initial executors (0 by
// default: cluster.Submit sets spark.executor.instances to them) but may
// run up to maxExecutors. As Spark's YarnAllocator, the default
// spark.executor.maxNumFailures is then 2 × maxExecutors, not 2 × the
// initial number: an application that scaled to 50 executors must not fail
// on its third lost container.
// Before, the default was 3 (2 × 0 initial executors, at least 3).
func TestMaxFailuresDefaultWithDynamicAllocation(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want int
	}{
		{"static", []string{cluster.KeyNumExecutors, "5"}, 10},
		{"dynamic, maxExecutors 50", []string{"spark.dynamicAllocation.enabled", "true",
			"spark.dynamicAllocation.maxExecutors", "50", cluster.KeyNumExecutors, "0"}, 100},
		{"dynamic, no maxExecutors", []string{"spark.dynamicAllocation.enabled", "true", cluster.KeyNumExecutors, "0"}, 1<<31 - 1},
		{"set", []string{"spark.dynamicAllocation.enabled", "true", cluster.KeyMaxExecutorFailures, "7"}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			for i := 0; i < len(tc.kv); i += 2 {
				conf.Set(tc.kv[i], tc.kv[i+1])
			}
			target, err := conf.GetInt(cluster.KeyNumExecutors, 0)
			if err != nil {
				t.Fatal(err)
			}
			a, err := newAllocator(nil, nil, "application_1_0001", "spark://CoarseGrainedScheduler@127.0.0.1:1", target,
				cluster.Resource{MemoryMB: 512, Cores: 1}, conf, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			if a.maxFailures != tc.want {
				t.Fatalf("spark.executor.maxNumFailures defaults to %d; want %d", a.maxFailures, tc.want)
			}
		})
	}
}
