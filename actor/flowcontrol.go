package actor

import protoactor "github.com/asynkron/protoactor-go/actor"

// processedMark is queued behind the messages delivered to an endpoint; the
// endpoint's loop runs it when it reaches it.
type processedMark func()

// AfterProcessed runs fn once the local endpoint whose name is target.Id
// has processed every message that Deliver handed it before this call (its
// handler returned, or the message was dropped), or at once when no running
// endpoint has that name. A transport uses it to bound what one connection
// has delivered but not yet processed: it reads on only when enough of that
// has been processed. fn runs on the endpoint's loop and must not block.
// On a concurrent endpoint (Isolated with ThreadCount > 1) fn runs when the
// earlier messages have been handed to its handler goroutines.
func (e *Env) AfterProcessed(target *protoactor.PID, fn func()) {
	if v, ok := e.endpoints.Load(target.Id); ok {
		if c := v.(*cell); !c.stopping.Load() {
			c.post(processedMark(fn))
			return
		}
	}
	fn()
}
