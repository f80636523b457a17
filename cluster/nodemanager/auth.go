package nodemanager

// This file holds who may ask what of a node manager: containers start and
// stop on its resource manager's word only, and an application's logs are
// read by the users its ACLs allow.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/internal/regularfile"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// aclsFile is the file, in an application's log folder, that keeps its
// ACLs, so that a restarted node manager still guards its logs.
const aclsFile = ".acls"

// requireRM fails an ask that does not come from the resource manager the
// node registered with (with spark.authenticate on: authenticated with the
// cluster's key). An ask from this env itself is allowed.
func (nm *NodeManager) requireRM(ctx *actor.CallContext, what string) error {
	id := ctx.SenderIdentity()
	if id == "" {
		return nil
	}
	if id != nm.cfg.ResourceManager.HostPort() {
		return fmt.Errorf("%w: a %s is taken from the resource manager %s only, not from %s", cluster.ErrPermissionDenied, what,
			nm.cfg.ResourceManager.HostPort(), id)
	}
	if cluster.AuthOn(nm.env.Conf()) {
		key, ok := nm.cfg.PeerKeyID(id)
		if !ok || key != "" {
			return fmt.Errorf("%w: a %s needs the cluster's key", cluster.ErrPermissionDenied, what)
		}
	}
	return nil
}

// requireLogAccess fails a log request for appID that user may not make:
// with spark.authenticate on, only a peer authenticated with the cluster's
// key asks; the application's ACLs (as its containers' launch contexts
// gave them) decide which user may read its logs.
func (nm *NodeManager) requireLogAccess(ctx *actor.CallContext, appID, user string) error {
	if err := cluster.ValidateAppID(appID); err != nil {
		return err
	}
	if id := ctx.SenderIdentity(); id != "" && cluster.AuthOn(nm.env.Conf()) {
		if key, ok := nm.cfg.PeerKeyID(id); !ok || key != "" {
			return fmt.Errorf("%w: the logs of %s are read with the cluster's key", cluster.ErrPermissionDenied, appID)
		}
	}
	if !cluster.ACLAllows(nm.appACLs(appID), nm.cfg.AdminACLs, user, false) {
		return fmt.Errorf("%w: user %q may not read the logs of %s (its owner, spark.ui.view.acls and spark.admin.acls may)",
			cluster.ErrPermissionDenied, user, appID)
	}
	return nil
}

// appACLs returns the ACLs of appID: as a launch context gave them, or as
// the application's log folder kept them.
func (nm *NodeManager) appACLs(appID string) *messages.RmAppAcls {
	nm.mu.Lock()
	a, ok := nm.acls[appID]
	nm.mu.Unlock()
	if ok {
		return a
	}
	// The application's log folder is its containers' to write in: the
	// copy may have been replaced by a FIFO (whose open would block this
	// endpoint) or a link to /dev/zero.
	f, err := regularfile.OpenNoFollow(filepath.Join(nm.cfg.Dir, "logs", appID, aclsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &messages.RmAppAcls{Enabled: true} // unreadable: nobody but admins
	}
	b, err := io.ReadAll(io.LimitReader(f, maxACLsFile+1))
	f.Close()
	if err != nil || len(b) > maxACLsFile {
		return &messages.RmAppAcls{Enabled: true} // unreadable: nobody but admins
	}
	a = &messages.RmAppAcls{}
	if proto.Unmarshal(b, a) != nil {
		// Unreadable: nobody but admins.
		return &messages.RmAppAcls{Enabled: true}
	}
	return a
}

// forgetACLs is forgetACLsLocked with nm.mu taken.
func (nm *NodeManager) forgetACLs(appID string) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.forgetACLsLocked(appID)
}

// forgetACLsLocked drops appID's ACLs from memory once the node runs and
// localizes none of its containers: what it keeps of them then (the logs'
// readers) reads the copy in the application's log folder (keepACLs), and
// memory does not grow with every application the node ever ran. nm.mu is
// held.
func (nm *NodeManager) forgetACLsLocked(appID string) {
	if _, ok := nm.acls[appID]; !ok {
		return
	}
	for _, p := range nm.containers {
		if p.appID == appID {
			return
		}
	}
	for _, l := range nm.localizing {
		if l.appID == appID {
			return
		}
	}
	delete(nm.acls, appID)
}

// maxACLsFile bounds the copy of an application's ACLs that appACLs reads:
// they came in one message.
const maxACLsFile = 64 << 20

// keepACLs writes acls into appID's log folder (created 0700).
func (nm *NodeManager) keepACLs(appID string, acls *messages.RmAppAcls) error {
	if acls == nil {
		return nil
	}
	dir := filepath.Join(nm.cfg.Dir, "logs", appID)
	if err := privatefile.MkdirAll(dir); err != nil {
		return err
	}
	b, err := proto.Marshal(acls)
	if err != nil {
		return err
	}
	return privatefile.WriteFile(filepath.Join(dir, aclsFile), b)
}
