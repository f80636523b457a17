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
