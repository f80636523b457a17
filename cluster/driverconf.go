// The keys of the driver's readiness rule and of its console progress bar, read and checked once.

package cluster

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// Keys of the driver's console progress bar, Spark's.
const (
	// KeyShowConsoleProgress is spark.ui.showConsoleProgress: whether the
	// driver draws its console progress bar (unset: when its output is a
	// terminal).
	KeyShowConsoleProgress = "spark.ui.showConsoleProgress"
	// KeyConsoleProgressInterval is how often the bar is redrawn (default
	// 200 ms; a bare number is in milliseconds).
	KeyConsoleProgressInterval = "spark.ui.consoleProgress.update.interval"
)

// DefaultRegisteredRatio is spark.scheduler.minRegisteredResourcesRatio's
// default on a cluster manager (Spark's YARN and Kubernetes backends).
const DefaultRegisteredRatio = 0.8

// DriverConf is what the readiness rule and the console progress bar of a
// driver read from its configuration (ParseDriverConf).
type DriverConf struct {
	// RegisteredRatio is KeyMinRegisteredRatio; MaxRegisteredWait
	// KeyMaxRegisteredWait.
	RegisteredRatio   float64
	MaxRegisteredWait time.Duration
	// ShowConsoleProgress is KeyShowConsoleProgress when it is set
	// (ShowConsoleProgressSet).
	ShowConsoleProgress, ShowConsoleProgressSet bool
	// ProgressInterval is KeyConsoleProgressInterval.
	ProgressInterval time.Duration
}

// ParseDriverConf reads the driver's readiness and progress keys of conf.
// A value that does not parse, a ratio that is not a number, or a
// progress interval that is not positive is a *actor.ConfError naming its
// key, so that a submission fails before anything runs rather than have
// its driver use a default in its place.
func ParseDriverConf(conf *actor.Conf) (DriverConf, error) {
	c := DriverConf{RegisteredRatio: DefaultRegisteredRatio}
	if v, ok := conf.Lookup(KeyMinRegisteredRatio); ok {
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil && math.IsNaN(r) {
			err = errors.New("not a number")
		}
		if err != nil {
			return c, &actor.ConfError{Key: KeyMinRegisteredRatio, Value: v, Err: err}
		}
		c.RegisteredRatio = r
	}
	var err error
	if c.MaxRegisteredWait, err = conf.GetDuration(KeyMaxRegisteredWait, "30s", time.Millisecond); err != nil {
		return c, err
	}
	if c.ShowConsoleProgressSet = conf.Contains(KeyShowConsoleProgress); c.ShowConsoleProgressSet {
		if c.ShowConsoleProgress, err = conf.GetBool(KeyShowConsoleProgress, false); err != nil {
			return c, err
		}
	}
	if c.ProgressInterval, err = conf.GetDuration(KeyConsoleProgressInterval, "200", time.Millisecond); err != nil {
		return c, err
	}
	if c.ProgressInterval <= 0 {
		return c, &actor.ConfError{Key: KeyConsoleProgressInterval, Value: conf.Get(KeyConsoleProgressInterval, ""), Err: errors.New("must be positive")}
	}
	return c, nil
}
