package history

// This file holds the history server's configuration keys and Config.

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/eventlog"
)

// The history server's configuration keys, Spark's.
const (
	// KeyLogDirectory is the folder of the event logs it reads (a path or
	// a file: URI; default DefaultLogDirectory).
	KeyLogDirectory = "spark.history.fs.logDirectory"
	// KeyUpdateInterval is how often it reads the folder again (default
	// 10s).
	KeyUpdateInterval = "spark.history.fs.update.interval"
	// KeyRetainedApplications is how many applications' pages it keeps in
	// memory (default 50); the least recently viewed go first, and are
	// read again from their logs when viewed again.
	KeyRetainedApplications = "spark.history.retainedApplications"
	// KeyUIPort is its web UI's port (default DefaultUIPort).
	KeyUIPort = "spark.history.ui.port"
	// KeyCleanerEnabled turns on the deletion of old event logs from the
	// folder (default false).
	KeyCleanerEnabled = "spark.history.fs.cleaner.enabled"
	// KeyCleanerInterval is how often the cleaner runs (default 1d).
	KeyCleanerInterval = "spark.history.fs.cleaner.interval"
	// KeyCleanerMaxAge deletes logs last written longer ago (default 7d).
	KeyCleanerMaxAge = "spark.history.fs.cleaner.maxAge"
	// KeyCleanerMaxNum bounds the logs kept: past it, the finished ones
	// written longest ago are deleted (default: no bound).
	KeyCleanerMaxNum = "spark.history.fs.cleaner.maxNum"
)

// DefaultLogDirectory is KeyLogDirectory's default, as Spark's.
const DefaultLogDirectory = "/tmp/spark-events"

// DefaultUIPort is KeyUIPort's default, as Spark's.
const DefaultUIPort = 18080

// Config configures a Provider.
type Config struct {
	// Dir is the event logs' folder.
	Dir string
	// UpdateInterval is how often the folder is read again; 0: never
	// after the first time (Refresh reads it on demand).
	UpdateInterval time.Duration
	// RetainedApplications bounds the applications whose pages are kept
	// in memory (at least 1).
	RetainedApplications int
	// Cleaner deletes old logs from the folder (off by default).
	Cleaner Cleaner
	// Logger receives what the provider could not read.
	Logger zerolog.Logger
}

// ConfigFromConf returns the Config that conf's keys describe. A value
// that does not parse, or a log directory that is not a local path, is an
// error naming its key.
func ConfigFromConf(conf *actor.Conf) (Config, error) {
	dir, err := eventlog.ParseFolder(KeyLogDirectory, conf.Get(KeyLogDirectory, DefaultLogDirectory))
	if err != nil {
		return Config{}, err
	}
	every, err := conf.GetDuration(KeyUpdateInterval, "10s", time.Second)
	if err != nil {
		return Config{}, err
	}
	retained, err := conf.GetInt(KeyRetainedApplications, 50)
	if err != nil {
		return Config{}, err
	}
	if retained < 1 {
		return Config{}, fmt.Errorf("history: %s must be at least 1, not %d", KeyRetainedApplications, retained)
	}
	cleaner, err := cleanerFromConf(conf)
	if err != nil {
		return Config{}, err
	}
	return Config{Dir: dir, UpdateInterval: every, RetainedApplications: retained, Cleaner: cleaner, Logger: zerolog.Nop()}, nil
}

// cleanerFromConf returns the Cleaner of conf's spark.history.fs.cleaner.*
// keys.
func cleanerFromConf(conf *actor.Conf) (c Cleaner, err error) {
	if c.Enabled, err = conf.GetBool(KeyCleanerEnabled, false); err != nil {
		return c, err
	}
	if c.Interval, err = conf.GetDuration(KeyCleanerInterval, "1d", time.Second); err != nil {
		return c, err
	}
	if c.MaxAge, err = conf.GetDuration(KeyCleanerMaxAge, "7d", time.Second); err != nil {
		return c, err
	}
	if c.MaxNum, err = conf.GetInt(KeyCleanerMaxNum, 0); err != nil {
		return c, err
	}
	if c.Enabled && (c.Interval <= 0 || c.MaxAge <= 0 || c.MaxNum < 0) {
		return c, fmt.Errorf("history: %s and %s must be positive, %s at least 0", KeyCleanerInterval, KeyCleanerMaxAge, KeyCleanerMaxNum)
	}
	return c, nil
}
