package webui

// This file holds the executors page (Spark's ExecutorsPage): the driver's
// row, then the executors, and dynamic allocation's state when a live
// driver has it.

import "net/http"

// executorsView is the executors page's data.
type executorsView struct {
	Executors                  []executorStatus
	Active, Dead               int
	Cores, Running, Done, Fail int
	Live                       bool // heartbeats and allocation are known
	// Allocation is dynamic allocation's state; nil when it is off.
	Allocation *allocationView
}

func (u *appUI) executorsPage(w http.ResponseWriter, r *http.Request) {
	v := executorsView{Executors: u.store.executorsSnapshot(u.heartbeats()), Allocation: u.allocationView(), Live: u.live()}
	for _, ex := range v.Executors {
		switch {
		case !ex.runsTasks():
			continue
		case ex.IsActive():
			v.Active++
			v.Cores += ex.Cores
		default:
			v.Dead++
		}
		v.Running += ex.Active
		v.Done += ex.Completed
		v.Fail += ex.Failed
	}
	render(w, r, "executors", page{Title: "Executors", Heading: u.heading(), Nav: u.nav("/executors/"), Notices: u.o.notices, Data: v}, u.o.beforeSend)
}
