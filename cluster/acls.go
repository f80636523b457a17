package cluster

// This file holds an application's ACLs as Spark configures them.

import (
	"slices"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Spark's ACL keys.
const (
	// KeyACLsEnable turns an application's ACLs on (default false: every
	// user may view and kill it).
	KeyACLsEnable = "spark.acls.enable"
	// KeyAdminACLs are users (comma-separated, "*": everyone) that may view
	// and modify every application; on a resource manager or node manager,
	// its own admins.
	KeyAdminACLs = "spark.admin.acls"
	// KeyModifyACLs are users that may kill the application.
	KeyModifyACLs = "spark.modify.acls"
	// KeyViewACLs are users that may read the application's logs.
	KeyViewACLs = "spark.ui.view.acls"
)

// ACLs are an application's access-control lists. Its owner (the
// submitting user) may always view and modify it.
type ACLs struct {
	// Enabled turns them on (spark.acls.enable).
	Enabled bool
	// View and Modify are the users that may view (read logs) and modify
	// (kill) the application; "*" is everyone.
	View, Modify []string
}

// ACLsFromConf returns the ACLs conf sets, as Spark's SecurityManager
// reads them: spark.admin.acls are in both lists.
func ACLsFromConf(conf *actor.Conf) (ACLs, error) {
	on, err := conf.GetBool(KeyACLsEnable, false)
	if err != nil {
		return ACLs{}, err
	}
	admins := SplitList(conf.Get(KeyAdminACLs, ""))
	return ACLs{Enabled: on,
		View:   slices.Concat(admins, SplitList(conf.Get(KeyViewACLs, ""))),
		Modify: slices.Concat(admins, SplitList(conf.Get(KeyModifyACLs, "")))}, nil
}

func (a ACLs) proto() *messages.RmAppAcls {
	return &messages.RmAppAcls{Enabled: a.Enabled, View: a.View, Modify: a.Modify}
}
