// What a seed draws for its YARN-shaped cluster, when it runs one.

package sim

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// yarnStream seeds the generator of the YARN draws, apart from the
// world's: a seed that runs no cluster draws what it drew before the
// cluster came in, and so replays as it did.
const yarnStream = 0x7a4e5e4d

// yarnShare is the share of seeds that run the application on the
// YARN-shaped cluster, out of yarnOutOf.
const yarnShare, yarnOutOf = 1, 4

// yarnConfig is a seed's cluster: the resource manager's and the node
// managers' intervals, the nodes' sizes, and the allocator's settings.
type yarnConfig struct {
	slots        int // executors a worker node has room for
	maxFailures  int // spark.executor.maxNumFailures
	amHeartbeat  time.Duration
	amInitial    time.Duration // the allocator's interval while containers are pending
	nmHeartbeat  time.Duration
	nodeExpiry   time.Duration
	checkEvery   time.Duration // the resource manager's check of nodes
	reportEvery  time.Duration // the client's poll of the application's report
	nodeRestart  time.Duration // a lost node's manager starts again after this
	launchFaults []fault       // windows of container launch failures
}

// execMemoryMB and amMemoryMB are the containers' memory.
const execMemoryMB, amMemoryMB = 1024, 512

// The node managers' heartbeats and the client's polls come at least
// every 700ms: longer than an answer takes in a window of delays (300ms
// each way), so that a loop's ticker never holds a tick when its stop
// comes (the loop's select would choose between them at random).

// drawYarn draws the cluster of the seed, or nil when the seed runs the
// application on the simulator's own cluster manager. It uses its own
// generator (yarnStream), so that the world's draws stay as they were;
// it adds its fault kinds to c.faults.
func drawYarn(seed uint64, c *config) *yarnConfig {
	r := rand.New(rand.NewPCG(seed, yarnStream))
	if r.IntN(yarnOutOf) >= yarnShare {
		return nil
	}
	y := &yarnConfig{
		slots:       (c.executors+c.hosts-1)/c.hosts + r.IntN(2),
		maxFailures: between(r, 2, 8),
		amHeartbeat: time.Duration(between(r, 300, 1100)) * time.Millisecond,
		amInitial:   time.Duration(between(r, 50, 250)) * time.Millisecond,
		nmHeartbeat: time.Duration(between(r, 700, 1500)) * time.Millisecond,
		nodeExpiry:  time.Duration(between(r, 2000, 8000)) * time.Millisecond,
		checkEvery:  time.Duration(between(r, 200, 700)) * time.Millisecond,
		reportEvery: time.Duration(between(r, 700, 1500)) * time.Millisecond,
		nodeRestart: durBetween(r, time.Second, 15*time.Second),
	}
	for range r.IntN(3) {
		f := fault{kind: faultLaunchFail, at: durBetween(r, 0, 20*time.Second), length: durBetween(r, 100*time.Millisecond, 5*time.Second),
			prob: 0.3 + 0.7*r.Float64()}
		y.launchFaults = append(y.launchFaults, f)
		c.faults = append(c.faults, f)
	}
	return y
}

// appConf is the application's configuration as the cluster sees it: the
// world's, with the executors' number and size and the allocator's
// settings.
func (c *config) appConf() *actor.Conf {
	y := c.yarn
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	return c.conf().
		Set(cluster.KeyNumExecutors, strconv.Itoa(c.executors)).
		Set(cluster.KeyExecutorCores, strconv.Itoa(c.cores)).
		Set(cluster.KeyExecutorMemory, strconv.Itoa(execMemoryMB)+"m").
		Set(cluster.KeyMaxExecutorFailures, strconv.Itoa(y.maxFailures)).
		Set(cluster.KeyHeartbeatIntervalMs, strconv.FormatInt(y.amHeartbeat.Milliseconds(), 10)).
		Set(cluster.KeyInitialAllocInterval, ms(y.amInitial))
}

// nodeResource is a worker node's capability: room for slots executors.
func (c *config) nodeResource() cluster.Resource {
	return cluster.Resource{MemoryMB: int64(c.yarn.slots) * execMemoryMB, Cores: c.yarn.slots * c.cores}
}
