// Rate-limited log lines: refusals and bad connections that a flood would otherwise turn into a log flood.

package netty

import (
	"sync/atomic"
	"time"
)

// refusedLogInterval is the least time between two log lines of one kind:
// connections refused for the same kind of limit, failed authentications,
// connections that do not speak the protocol.
const refusedLogInterval = 10 * time.Second

// rateLog lets a kind of log line through at most once per
// refusedLogInterval.
type rateLog struct{ at atomic.Int64 } // UnixNano of the last line

// allow reports whether a line may be logged now, and if so counts it as
// logged.
func (l *rateLog) allow() bool { return l.allowEvery(refusedLogInterval) }

// allowEvery is allow with another interval.
func (l *rateLog) allowEvery(interval time.Duration) bool {
	now := time.Now().UnixNano()
	last := l.at.Load()
	return (last == 0 || now-last >= int64(interval)) && l.at.CompareAndSwap(last, now)
}
