// Rate-limited logging of messages that could not be delivered.

package actor

import (
	"sync"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// dropLogInterval is the least time between two log lines about messages
// that a transport could not deliver; the drops in between are counted and
// reported with the next line.
const dropLogInterval = 10 * time.Second

// dropLog rate-limits the log of undeliverable messages, so that a
// connection that dies with 100,000 messages queued costs one line, not
// 100,000 (every drop is still counted in Env.Dropped).
type dropLog struct {
	mu         sync.Mutex
	next       time.Time
	suppressed int
}

// log writes a line for a message to target that could not be delivered
// because of err, unless one was written less than dropLogInterval ago.
func (d *dropLog) log(l *zerolog.Logger, target *protoactor.PID, err error) {
	now := time.Now()
	d.mu.Lock()
	if now.Before(d.next) {
		d.suppressed++
		d.mu.Unlock()
		return
	}
	suppressed := d.suppressed
	d.suppressed = 0
	d.next = now.Add(dropLogInterval)
	d.mu.Unlock()
	l.Warn().Err(err).Str("to", target.String()).Int("alsoDroppedSinceLastLine", suppressed).
		Msg("message could not be delivered; dropped")
}
