package webui

// This file holds what the driver's UI shows of dynamic allocation: the
// option that gives it the ExecutorAllocationManager, the section of the
// executors page, and its JSON route.

import (
	"net/http"
	"strconv"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// AllocationSource is what the driver's UI reads of dynamic allocation
// (an *endpoints.ExecutorAllocationManager).
type AllocationSource interface {
	Status() endpoints.AllocationStatus
}

// WithExecutorAllocation makes the driver's UI show src's state and last
// decisions on its executors page, and serve them on
// /api/v1/applications/{id}/allocation. Without it, the page says dynamic
// allocation is off.
func WithExecutorAllocation(src AllocationSource) Option {
	return optionFunc(func(o *options) { o.alloc = src })
}

// allocationView is the executors page's dynamic allocation section.
type allocationView struct {
	endpoints.AllocationStatus
	// MaxExecutors is "no bound" or the bound.
	MaxExecutors string
}

// allocationView returns the section's data, nil without a source.
func (u *appUI) allocationView() *allocationView {
	if u.o.alloc == nil {
		return nil
	}
	st := u.o.alloc.Status()
	v := &allocationView{AllocationStatus: st, MaxExecutors: "no bound"}
	if st.Config.MaxExecutors < 1<<31-1 {
		v.MaxExecutors = strconv.Itoa(st.Config.MaxExecutors)
	}
	return v
}

// allocationDecision is one decision in the JSON API.
type allocationDecision struct {
	Time           time.Time `json:"time"`
	Decision       string    `json:"decision"`
	PreviousTarget int       `json:"previousTarget"`
	Target         int       `json:"target"`
	Backlog        int       `json:"backlog"`
	Running        int       `json:"runningTasks"`
	Executors      int       `json:"executors"`
	Idle           int       `json:"idleExecutors"`
	Removed        []string  `json:"removed,omitempty"`
	Message        string    `json:"message"`
}

// allocationData is the JSON API's dynamic allocation state.
type allocationData struct {
	Enabled      bool                 `json:"enabled"`
	Target       int                  `json:"target"`
	MinExecutors int                  `json:"minExecutors"`
	MaxExecutors int                  `json:"maxExecutors"`
	Backlog      int                  `json:"backlog"`
	Running      int                  `json:"runningTasks"`
	Executors    int                  `json:"executors"`
	Idle         int                  `json:"idleExecutors"`
	Decisions    []allocationDecision `json:"decisions"`
}

func (u *DriverUI) apiAllocation(w http.ResponseWriter, r *http.Request) {
	if !u.apiApp(w, r) {
		return
	}
	out := allocationData{Decisions: []allocationDecision{}}
	if u.o.alloc != nil {
		st := u.o.alloc.Status()
		out = allocationData{Enabled: true, Target: st.Target, MinExecutors: st.Config.MinExecutors, MaxExecutors: st.Config.MaxExecutors,
			Backlog: st.Pending, Running: st.Running, Executors: st.Executors, Idle: st.Idle, Decisions: []allocationDecision{}}
		for _, d := range st.Decisions {
			out.Decisions = append(out.Decisions, allocationDecision{Time: d.Time, Decision: d.Kind, PreviousTarget: d.From, Target: d.To,
				Backlog: d.Pending, Running: d.Running, Executors: d.Executors, Idle: d.Idle, Removed: d.Removed, Message: d.String()})
		}
	}
	writeJSON(w, out)
}
