// The cleaner of the event log folder (Spark's spark.history.fs.cleaner.*).

package history

import (
	"os"
	"slices"
	"time"

	"github.com/sparkrpc/sparkrpc/eventlog"
)

// Cleaner says which event logs the provider deletes from its folder, as
// Spark's history server does with spark.history.fs.cleaner.*: every
// Interval, the logs last written more than MaxAge ago, then, while more
// than MaxNum logs are left, the finished ones written longest ago. Off
// unless Enabled.
type Cleaner struct {
	Enabled  bool
	Interval time.Duration // KeyCleanerInterval (1d)
	MaxAge   time.Duration // KeyCleanerMaxAge (7d)
	MaxNum   int           // KeyCleanerMaxNum; 0: no bound
}

// clean deletes the logs of the folder that c says to as of now, and
// returns the paths it deleted. Only logs the folder's listing names are
// deleted (files and rolling folders of event logs), nothing else in it.
func (c Cleaner) clean(dir string, now time.Time, log func(path string, err error)) (deleted []string) {
	infos, err := eventlog.List(dir)
	if err != nil {
		log(dir, err)
		return nil
	}
	remove := func(in eventlog.Info) {
		if err := os.RemoveAll(in.Path); err != nil {
			log(in.Path, err)
			return
		}
		deleted = append(deleted, in.Path)
	}
	var kept []eventlog.Info
	for _, in := range infos {
		if c.MaxAge > 0 && now.Sub(in.ModTime) > c.MaxAge {
			remove(in)
			continue
		}
		kept = append(kept, in)
	}
	if c.MaxNum <= 0 || len(kept) <= c.MaxNum {
		return deleted
	}
	// Too many left: the finished ones written longest ago go first; logs
	// still being written stay.
	slices.SortStableFunc(kept, func(a, b eventlog.Info) int { return a.ModTime.Compare(b.ModTime) })
	excess := len(kept) - c.MaxNum
	for _, in := range kept {
		if excess == 0 {
			break
		}
		if !in.InProgress {
			remove(in)
			excess--
		}
	}
	return deleted
}
