package yarn

// This file holds what fits where: the executors a local cluster or a
// resource manager's nodes can hold beside the application master, the
// errors for what never fits, and the warning for what fits only in part.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
)

// executorsThatFit returns how many executors fit on the workers of the
// local cluster m (the application master has a node of its own): the
// default number of executors there. It fails when the AM or an executor is
// larger than a node, as the application could then never run.
func executorsThatFit(conf *actor.Conf, m cluster.Master, mode string) (int, error) {
	amMem, amCores, err := amResource(conf, mode)
	if err != nil {
		return 0, err
	}
	exMem, err := memoryMB(conf, cluster.KeyExecutorMemory, "1g")
	if err != nil {
		return 0, err
	}
	exCores, err := conf.GetInt(cluster.KeyExecutorCores, 1)
	if err != nil {
		return 0, err
	}
	if exCores < 1 {
		return 0, &actor.ConfError{Key: cluster.KeyExecutorCores, Value: strconv.Itoa(exCores), Err: errors.New("must be at least 1")}
	}
	node := cluster.Resource{MemoryMB: m.WorkerMemoryMB, Cores: m.WorkerCores}
	tooLarge := func(what string, r cluster.Resource, memFlag, coresFlag string) error {
		hint := fmt.Sprintf("Please give the nodes of %s more memory (M, in MiB) or lower %s.", m, memFlag)
		if r.MemoryMB <= node.MemoryMB {
			hint = fmt.Sprintf("Please give the nodes of %s more cores (C) or lower %s.", m, coresFlag)
		}
		return &cluster.ResourceTooLargeError{What: what, Requested: r, Max: node, Hint: hint}
	}
	am, ex := cluster.Resource{MemoryMB: amMem, Cores: amCores}, cluster.Resource{MemoryMB: exMem, Cores: exCores}
	if !am.Fits(node) {
		if mode == "cluster" {
			return 0, tooLarge("AM", am, "--driver-memory", "--driver-cores")
		}
		return 0, tooLarge("AM", am, cluster.KeyAMMemory, cluster.KeyAMCores)
	}
	if !ex.Fits(node) {
		return 0, tooLarge("executor", ex, "--executor-memory", "--executor-cores")
	}
	return m.Workers * int(min(m.WorkerMemoryMB/exMem, int64(m.WorkerCores/exCores))), nil
}

// amResource returns the application master's container: the driver's in
// cluster mode, spark.yarn.am.* in client mode.
func amResource(conf *actor.Conf, mode string) (int64, int, error) {
	memKey, memDef, coresKey := cluster.KeyAMMemory, "512m", cluster.KeyAMCores
	if mode == "cluster" {
		memKey, memDef, coresKey = cluster.KeyDriverMemory, "1g", cluster.KeyDriverCores
	}
	mem, err := memoryMB(conf, memKey, memDef)
	if err != nil {
		return 0, 0, err
	}
	cores, err := conf.GetInt(coresKey, 1)
	return mem, cores, err
}

// noExecutorFits is the error for a local cluster with no room for an
// executor beside the application master.
func noExecutorFits(conf *actor.Conf, m cluster.Master, mode string) error {
	amMem, amCores, _ := amResource(conf, mode)
	exMem, _ := memoryMB(conf, cluster.KeyExecutorMemory, "1g")
	exCores, _ := conf.GetInt(cluster.KeyExecutorCores, 1)
	return fmt.Errorf("%w: no executor (%d MB, %s) fits on %s beside the application master (%d MB, %s): "+
		"give the master more workers, cores or memory, or lower --executor-memory or --executor-cores", cluster.ErrResourceTooLarge,
		exMem, cores(exCores), m, amMem, cores(amCores))
}

// warnFewResources tells the user at once that the cluster where can hold
// only n of the want executors, and when the job proceeds anyway.
func warnFewResources(w io.Writer, conf *actor.Conf, want, n int, where string) {
	fmt.Fprintf(w, "Warning: %d executors asked for, but %s can hold at most %d beside the application master. "+
		"The job proceeds when %s (%s) of them have registered, or after %s (%s).\n", want, where, n,
		cluster.KeyMinRegisteredRatio, conf.Get(cluster.KeyMinRegisteredRatio, "0.8"), cluster.KeyMaxRegisteredWait, conf.Get(cluster.KeyMaxRegisteredWait, "30s"))
}

// executorCapacity returns how many executors ex the nodes hold beside one
// application master am, placed where it leaves the most room.
func executorCapacity(nodes []cluster.Resource, am, ex cluster.Resource) int {
	fit := func(node cluster.Resource) int {
		if node.MemoryMB < ex.MemoryMB || node.Cores < ex.Cores || ex.MemoryMB <= 0 || ex.Cores <= 0 {
			return 0
		}
		return int(min(node.MemoryMB/ex.MemoryMB, int64(node.Cores/ex.Cores)))
	}
	best := 0
	for i := range nodes {
		if !am.Fits(nodes[i]) {
			continue
		}
		n := 0
		for j, node := range nodes {
			if j == i {
				node = cluster.Resource{MemoryMB: node.MemoryMB - am.MemoryMB, Cores: node.Cores - am.Cores}
			}
			n += fit(node)
		}
		best = max(best, n)
	}
	return best
}

// checkCapacity warns when the resource manager's nodes cannot hold the
// executors asked for (an unreachable resource manager is reported by the
// submission itself).
func checkCapacity(ctx context.Context, w io.Writer, client *rmclient.Client, conf *actor.Conf, mode string, ex cluster.Resource) {
	want, err := conf.GetInt(cluster.KeyNumExecutors, 2)
	if err != nil || want <= 0 {
		return
	}
	amMem, amCores, err := amResource(conf, mode)
	if err != nil {
		return
	}
	reports, err := client.Nodes(ctx)
	if err != nil || len(reports) == 0 {
		return
	}
	var nodes []cluster.Resource
	for _, r := range reports {
		if r.GetState() == "RUNNING" {
			nodes = append(nodes, cluster.ResourceFromProto(r.GetCapability()))
		}
	}
	if n := executorCapacity(nodes, cluster.Resource{MemoryMB: amMem, Cores: amCores}, ex); n < want {
		warnFewResources(w, conf, want, n, clusterNodes(len(nodes)))
	}
}

func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return strconv.Itoa(n) + " cores"
}

func memoryMB(conf *actor.Conf, key, def string) (int64, error) {
	n, err := conf.GetSizeAsBytes(key, def, 1<<20)
	if err != nil {
		return 0, err
	}
	if n < 1<<20 {
		return 0, &actor.ConfError{Key: key, Value: conf.Get(key, def), Err: errors.New("must be at least 1m")}
	}
	return n >> 20, nil
}

// clusterNodes names the cluster's n nodes in a warning.
func clusterNodes(n int) string {
	if n == 1 {
		return "the cluster's one node"
	}
	return fmt.Sprintf("the cluster's %d nodes", n)
}
