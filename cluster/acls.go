package cluster

// This file holds an application's ACLs as Spark configures them.

import (
	"os"
	"os/user"
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

func (a ACLs) Proto() *messages.RmAppAcls {
	return &messages.RmAppAcls{Enabled: a.Enabled, View: a.View, Modify: a.Modify}
}

// ACLAllows reports whether user may view (modify false) or modify an
// application with acls: always when its ACLs are off (Spark's
// spark.acls.enable false), else when user is its owner, an admin
// (admins, the resource manager's) or in the list ("*": everyone). Without
// Kerberos the user is what the client claims, as in Spark on YARN with
// simple authentication.
func ACLAllows(acls *messages.RmAppAcls, admins []string, user string, modify bool) bool {
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

// CurrentUser is the user this process acts as, as Spark's
// Utils.getCurrentUserName: SPARK_USER when set, else the process's user.
func CurrentUser() string {
	if u := os.Getenv("SPARK_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}
