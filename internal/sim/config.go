// What a seed draws before the run starts: the application's shape, its
// configuration and its fault schedule.

package sim

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// config is one seed's application and schedule.
type config struct {
	executors, cores, hosts int
	maxFailures             int

	networkTimeout    time.Duration // the heartbeat timeout
	timeoutInterval   time.Duration // how often the driver expires silent executors
	heartbeatInterval time.Duration
	reviveInterval    time.Duration
	askTimeout        time.Duration

	minDelay, maxDelay time.Duration // a message's delay on a connection
	taskMin, taskMax   time.Duration // a task's run time

	jobs   []jobConfig
	faults []fault
	bound  time.Duration // the virtual time the application must end within

	yarn *yarnConfig // the YARN-shaped cluster; nil: the simulator's cluster manager
}

// jobConfig is one job: when it is submitted and, if it is, cancelled.
type jobConfig struct {
	parts          int
	submit, cancel time.Duration
	race           bool // the cancel races the next status update the driver gets
}

func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

func durBetween(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// drawConfig draws a seed's config. Intervals are whole milliseconds
// (Spark's keys take them so) of odd lengths, so that the periodic timers
// of the code under test rarely fire at one instant.
func drawConfig(r *rand.Rand) config {
	c := config{
		executors: between(r, 2, 4), cores: between(r, 1, 2), hosts: between(r, 2, 3), maxFailures: 4,
		networkTimeout:    time.Duration(between(r, 5000, 9000)) * time.Millisecond,
		timeoutInterval:   time.Duration(between(r, 700, 1500)) * time.Millisecond,
		heartbeatInterval: time.Duration(between(r, 500, 1100)) * time.Millisecond,
		reviveInterval:    time.Duration(between(r, 700, 1300)) * time.Millisecond,
		askTimeout:        20 * time.Second,
		minDelay:          20 * time.Microsecond,
		maxDelay:          time.Duration(between(r, 100, 3000)) * time.Microsecond,
		taskMin:           20 * time.Millisecond,
		taskMax:           time.Duration(between(r, 100, 3000)) * time.Millisecond,
		bound:             30 * time.Minute,
	}
	at := time.Duration(0)
	for range between(r, 1, 3) {
		at += durBetween(r, 10*time.Millisecond, 4*time.Second)
		j := jobConfig{parts: between(r, 1, 16), submit: at}
		if r.IntN(2) == 0 {
			j.cancel = at + durBetween(r, time.Millisecond, 4*time.Second)
			j.race = r.IntN(4) > 0
		}
		c.jobs = append(c.jobs, j)
	}
	c.faults = drawFaults(r, &c)
	return c
}

// conf is the application's configuration.
func (c *config) conf() *actor.Conf {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	return actor.NewConf().
		Set(actor.KeyNetworkTimeout, ms(c.networkTimeout)).
		Set(actor.KeyAskTimeout, ms(c.askTimeout)).
		Set(actor.KeyLookupTimeout, ms(c.askTimeout)).
		Set(endpoints.KeyTimeoutInterval, ms(c.timeoutInterval)).
		Set(endpoints.KeyHeartbeatInterval, ms(c.heartbeatInterval)).
		Set(endpoints.KeyReviveInterval, ms(c.reviveInterval)).
		Set(endpoints.KeyTaskMaxFailures, strconv.Itoa(c.maxFailures))
}
