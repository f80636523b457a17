package resourcemanager

// This file holds who may ask what of the resource manager: with
// spark.authenticate on, the key a peer's connection authenticated with
// decides (an application's key: only that application's master messages;
// the cluster's key: clients, admins and node managers), and an
// application's ACLs decide which user may kill it.

import (
	"fmt"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// peerKey returns the key id the asker's connection authenticated with:
// local is true for an ask from this env (no connection), and err is set
// when the connection is gone or unauthenticated.
func peerKey(ctx *actor.CallContext, lookup func(string) (string, bool)) (key string, local bool, err error) {
	id := ctx.SenderIdentity()
	if id == "" {
		return "", true, nil
	}
	key, ok := lookup(id)
	if !ok {
		return "", false, fmt.Errorf("%w: %s has no authenticated connection", cluster.ErrPermissionDenied, id)
	}
	return key, false, nil
}

// requireClusterKey fails an ask that does not come from a peer
// authenticated with the cluster's key (with spark.authenticate on).
func (e *rmEndpoint) requireClusterKey(ctx *actor.CallContext, what string) error {
	if !e.rm.auth {
		return nil
	}
	key, local, err := peerKey(ctx, e.rm.cfg.PeerKeyID)
	if err != nil || local {
		return err
	}
	if key != "" {
		return fmt.Errorf("%w: %s needs the cluster's key; %s authenticated with application %s's", cluster.ErrPermissionDenied, what, ctx.SenderIdentity(), key)
	}
	return nil
}

// requireNode fails a node manager's ask about nodeID that does not come
// from that node itself, over its own connection (its identity is its node
// id), with the cluster's key: a peer registers, heartbeats for and
// unregisters no node but its own.
func (e *rmEndpoint) requireNode(ctx *actor.CallContext, nodeID, what string) error {
	if err := e.requireClusterKey(ctx, what); err != nil {
		return err
	}
	if id := ctx.SenderIdentity(); id != "" && id != nodeID {
		return fmt.Errorf("%w: %s of node %s comes from that node only, not from %s", cluster.ErrPermissionDenied, what, nodeID, id)
	}
	return nil
}

// requireAppKey fails an application master's ask for appID that does not
// come from a peer authenticated with appID's key (with spark.authenticate
// on).
func (e *rmEndpoint) requireAppKey(ctx *actor.CallContext, appID, what string) error {
	if !e.rm.auth {
		return nil
	}
	key, local, err := peerKey(ctx, e.rm.cfg.PeerKeyID)
	if err != nil || local {
		return err
	}
	if key != appID {
		return fmt.Errorf("%w: %s for application %s needs that application's key; %s authenticated with %s", cluster.ErrPermissionDenied,
			what, appID, ctx.SenderIdentity(), keyName(key))
	}
	return nil
}

// requireClusterOrAppKey fails an ask about appID from a peer authenticated
// with another application's key.
func (e *rmEndpoint) requireClusterOrAppKey(ctx *actor.CallContext, appID, what string) error {
	if !e.rm.auth {
		return nil
	}
	key, local, err := peerKey(ctx, e.rm.cfg.PeerKeyID)
	if err != nil || local {
		return err
	}
	if key != "" && key != appID {
		return fmt.Errorf("%w: %s for application %s: %s authenticated with %s", cluster.ErrPermissionDenied, what, appID, ctx.SenderIdentity(), keyName(key))
	}
	return nil
}

// requireSelf fails an ask that does not come from this env.
func requireSelf(ctx *actor.CallContext, what string) error {
	if id := ctx.SenderIdentity(); id != "" {
		return fmt.Errorf("%w: %s is the resource manager's own; %s may not report it", cluster.ErrPermissionDenied, what, id)
	}
	return nil
}

func keyName(key string) string {
	if key == "" {
		return "the cluster's key"
	}
	return "application " + key + "'s key"
}

// requireStager fails a staging ask for appID that does not come from the
// user and the connection that created the application (with the
// cluster's key), or that comes after its submission.
func (e *rmEndpoint) requireStager(ctx *actor.CallContext, appID, user string) error {
	a, err := e.requireCreator(ctx, appID, user, "stage its resources")
	if err != nil {
		return err
	}
	if a.state != cluster.StateNew {
		return fmt.Errorf("%w: application %s is %s: resources are staged before the submission", cluster.ErrInvalidState, appID, a.state)
	}
	return nil
}

// requireCreator fails an ask about appID (what the asker may do, as
// "stage its resources") that does not come from the user and the
// connection that created the application (with the cluster's key): those
// that stage for it are those that submit it.
func (e *rmEndpoint) requireCreator(ctx *actor.CallContext, appID, user, what string) (*rmApp, error) {
	if err := e.requireClusterKey(ctx, what); err != nil {
		return nil, err
	}
	a, err := e.core.app(appID)
	if err != nil {
		return nil, err
	}
	if user != a.creator || ctx.SenderIdentity() != a.creatorIdentity {
		return nil, fmt.Errorf("%w: only the user and the client that created application %s (%q) may %s, not %q from %s",
			cluster.ErrPermissionDenied, appID, a.creator, what, user, peerName(ctx))
	}
	return a, nil
}

// requireNodeOf fails an ask for appID's staged resources that does not
// come from a registered node manager on which the application has a
// container (with the cluster's key). An ask from this env is allowed.
func (e *rmEndpoint) requireNodeOf(ctx *actor.CallContext, appID, what string) error {
	if err := e.requireClusterKey(ctx, what); err != nil {
		return err
	}
	a, err := e.core.app(appID)
	if err != nil {
		return err
	}
	id := ctx.SenderIdentity()
	if id == "" {
		return nil
	}
	if n, ok := e.core.nodes[id]; ok && !n.lost {
		for _, ct := range a.containers {
			if ct.node == n {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: %s of application %s is read only by a registered node manager running one of its containers, not by %s",
		cluster.ErrPermissionDenied, what, appID, id)
}

func peerName(ctx *actor.CallContext) string {
	if id := ctx.SenderIdentity(); id != "" {
		return id
	}
	return "this process"
}
