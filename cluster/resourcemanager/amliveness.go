// The application masters' liveness: an AM that stops talking to the
// resource manager fails its application.

package resourcemanager

import (
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
)

// DefaultAMExpiry is Config.AMExpiry's default, YARN's
// yarn.am.liveness-monitor.expiry-interval-ms.
const DefaultAMExpiry = 10 * time.Minute

// checkAMs fails the applications whose application master has said
// nothing for c.amExpiry since its container was launched or it last
// registered or asked for containers: one that hangs, or never registers,
// would otherwise hold its containers, and leave its application RUNNING
// (or ACCEPTED), for ever. Its containers are stopped, its AM's too. It
// returns the ids of the applications it failed, with what it must do.
func (c *rmCore) checkAMs() (failed []string, acts []rmAction) {
	now := c.now()
	for _, id := range c.appOrder {
		a := c.apps[id]
		if a.state.Terminal() || a.amContainer == nil || now.Sub(a.amSeen) <= c.amExpiry {
			continue
		}
		diag := fmt.Sprintf("Application %s failed: its ApplicationMaster (container %s) sent nothing for %s (the resource manager's AM expiry)",
			a.id, a.amContainer.id, c.amExpiry)
		acts = append(acts, c.finishApp(a, cluster.StateFailed, cluster.FinalFailed, diag, true)...)
		failed = append(failed, a.id)
	}
	return failed, acts
}
