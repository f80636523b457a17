// Context.SendEvery: periodic messages to the endpoint itself.

package actor

import (
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
)

// SendEvery sends msg to the endpoint itself every interval, until the
// endpoint stops or the returned function is called: Spark's periodic
// self-send (the driver's ReviveOffers every spark.scheduler.revive.interval,
// the heartbeat receiver's expiry check). Call it from OnStart or a handler.
// The message is queued like any other, so its handler runs on the
// endpoint's loop, in turn with the rest of its mail. A non-positive interval
// is an ErrInvalidTimeout.
func (c *Context) SendEvery(interval time.Duration, msg proto.Message) (stop func(), err error) {
	if isNilMessage(msg) {
		return nil, ErrNilMessage
	}
	if interval <= 0 {
		return nil, fmt.Errorf("%w: interval %s", ErrInvalidTimeout, interval)
	}
	self := c.cell.ref
	done := c.cell.done
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-done:
				return
			case <-t.C:
				if self.Send(msg) != nil {
					return // stopping: the endpoint takes no more mail
				}
			}
		}
	}()
	return func() { once.Do(func() { close(quit) }) }, nil
}
