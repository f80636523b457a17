package cluster

// This file holds who may ask what of the resource manager: with
// spark.authenticate on, the key a peer's connection authenticated with
// decides (an application's key: only that application's master messages;
// the cluster's key: clients, admins and node managers), and an
// application's ACLs decide which user may kill it.

import (
	"fmt"
	"slices"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
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
		return "", false, fmt.Errorf("%w: %s has no authenticated connection", ErrPermissionDenied, id)
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
		return fmt.Errorf("%w: %s needs the cluster's key; %s authenticated with application %s's", ErrPermissionDenied, what, ctx.SenderIdentity(), key)
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
		return fmt.Errorf("%w: %s for application %s needs that application's key; %s authenticated with %s", ErrPermissionDenied,
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
		return fmt.Errorf("%w: %s for application %s: %s authenticated with %s", ErrPermissionDenied, what, appID, ctx.SenderIdentity(), keyName(key))
	}
	return nil
}

// requireSelf fails an ask that does not come from this env.
func requireSelf(ctx *actor.CallContext, what string) error {
	if id := ctx.SenderIdentity(); id != "" {
		return fmt.Errorf("%w: %s is the resource manager's own; %s may not report it", ErrPermissionDenied, what, id)
	}
	return nil
}

func keyName(key string) string {
	if key == "" {
		return "the cluster's key"
	}
	return "application " + key + "'s key"
}

// aclAllows reports whether user may view (modify false) or modify an
// application with acls: always when its ACLs are off (Spark's
// spark.acls.enable false), else when user is its owner, an admin
// (admins, the resource manager's) or in the list ("*": everyone). Without
// Kerberos the user is what the client claims, as in Spark on YARN with
// simple authentication.
func aclAllows(acls *messages.RmAppAcls, admins []string, user string, modify bool) bool {
	if acls == nil || !acls.GetEnabled() {
		return true
	}
	if user != "" && user == acls.GetOwner() {
		return true
	}
	list := acls.GetView()
	if modify {
		list = acls.GetModify()
	}
	for _, l := range [][]string{admins, list} {
		if slices.Contains(l, "*") || user != "" && slices.Contains(l, user) {
			return true
		}
	}
	return false
}
