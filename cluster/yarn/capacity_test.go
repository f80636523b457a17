package yarn

import (
	"strconv"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// local-cluster[N,C,M] means N executors, as in Spark: the application
// master has a node of its own, and each worker runs an executor with the
// worker's C cores.
func TestLocalClusterFitsOneExecutorPerWorker(t *testing.T) {
	for _, tc := range []struct {
		master, mode string
		conf         []string
		want         int
	}{
		{"local-cluster[2,1,1024]", "client", nil, 2},
		{"local-cluster[2,1,1024]", "cluster", nil, 2},
		{"local-cluster[3,1,512]", "cluster", nil, 3},
		{"local-cluster[1,1,512]", "client", nil, 1},
		{"local-cluster[2,4,4096]", "client", nil, 2},
		// Smaller executors than a worker: as many as fit.
		{"local-cluster[2,4,4096]", "client", []string{cluster.KeyExecutorCores, "2"}, 4},
	} {
		m, err := cluster.ParseMaster(tc.master)
		if err != nil {
			t.Fatal(err)
		}
		conf := actor.NewConf()
		for i := 0; i+1 < len(tc.conf); i += 2 {
			conf.Set(tc.conf[i], tc.conf[i+1])
		}
		// What Submit sets for a local cluster.
		conf.SetIfMissing(cluster.KeyDriverMemory, "512m").SetIfMissing(cluster.KeyExecutorMemory, "512m").
			SetIfMissing(cluster.KeyExecutorCores, strconv.Itoa(m.WorkerCores))
		n, err := executorsThatFit(conf, m, tc.mode)
		if err != nil || n != tc.want {
			t.Errorf("%s %s %v: %d executors fit (%v), want %d", tc.master, tc.mode, tc.conf, n, err, tc.want)
		}
	}
}
