// The keys a driver reads from its configuration, read and checked once.

package endpoints

import (
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// driverConf is what NewDriver reads from its env's configuration.
type driverConf struct {
	maxFailures, cpus int
	maxSize           int   // spark.rpc.message.maxSize
	maxResult         int64 // spark.driver.maxResultSize; 0: no limit
	revive            time.Duration
	starvation        time.Duration
	hbTimeout         time.Duration // an executor's silence before its removal
	hbCheck           time.Duration // spark.network.timeoutInterval
	busCapacity       int
}

// CheckDriverConf checks the keys of conf that NewDriver reads (the task
// scheduler's, the heartbeats' and the listener bus's), so that a
// submission with a malformed one fails before anything starts rather than
// when its driver does. The error names the key.
func CheckDriverConf(conf *actor.Conf) error {
	_, err := parseDriverConf(conf)
	return err
}

// parseDriverConf reads the keys of a driver's configuration.
func parseDriverConf(conf *actor.Conf) (c driverConf, err error) {
	if c.maxFailures, err = conf.GetInt(KeyTaskMaxFailures, 4); err != nil {
		return c, err
	}
	if c.cpus, err = conf.GetInt(KeyTaskCpus, 1); err != nil {
		return c, err
	}
	if c.maxFailures < 1 || c.cpus < 1 {
		return c, fmt.Errorf("%w: %s and %s must be at least 1", ErrInvalidConfig, KeyTaskMaxFailures, KeyTaskCpus)
	}
	if c.maxSize, err = conf.MaxMessageSize(); err != nil {
		return c, err
	}
	// A negative size does not parse.
	if c.maxResult, err = conf.GetSizeAsBytes(KeyMaxResultSize, "1g", 1); err != nil {
		return c, err
	}
	if c.revive, err = conf.GetDuration(KeyReviveInterval, "1s", time.Millisecond); err != nil {
		return c, err
	}
	if c.starvation, err = conf.GetDuration(KeyStarvationTimeout, "15s", time.Millisecond); err != nil {
		return c, err
	}
	if c.starvation <= 0 {
		return c, fmt.Errorf("%w: %s must be positive", ErrInvalidConfig, KeyStarvationTimeout)
	}
	if err = c.parseHeartbeats(conf); err != nil {
		return c, err
	}
	if c.busCapacity, err = conf.GetInt(KeyListenerBusCapacity, defaultListenerBusCapacity); err != nil {
		return c, err
	}
	if c.busCapacity < 1 {
		return c, fmt.Errorf("%w: %s must be at least 1", ErrInvalidConfig, KeyListenerBusCapacity)
	}
	return c, nil
}

// parseHeartbeats reads the heartbeat receiver's keys, and checks that
// executors heartbeat more often than their silence is taken for a loss.
func (c *driverConf) parseHeartbeats(conf *actor.Conf) (err error) {
	if c.hbTimeout, err = heartbeatTimeout(conf); err != nil {
		return err
	}
	if c.hbCheck, err = conf.GetDuration(KeyTimeoutInterval, "60s", time.Millisecond); err != nil {
		return err
	}
	if c.hbCheck <= 0 {
		return fmt.Errorf("%w: %s must be positive", ErrInvalidConfig, KeyTimeoutInterval)
	}
	return checkHeartbeatInterval(conf, c.hbTimeout)
}
