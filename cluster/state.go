package cluster

// This file holds the application states, final statuses and resources.

import (
	"fmt"
	"strings"

	"github.com/sparkrpc/sparkrpc/messages"
)

// AppState is the state of an application on the resource manager (YARN's
// YarnApplicationState): NEW → SUBMITTED → ACCEPTED → RUNNING → FINISHED,
// FAILED or KILLED.
type AppState int32

// Application states.
const (
	StateNew       = AppState(messages.RmAppState_RM_APP_STATE_NEW)
	StateSubmitted = AppState(messages.RmAppState_RM_APP_STATE_SUBMITTED)
	StateAccepted  = AppState(messages.RmAppState_RM_APP_STATE_ACCEPTED)
	StateRunning   = AppState(messages.RmAppState_RM_APP_STATE_RUNNING)
	StateFinished  = AppState(messages.RmAppState_RM_APP_STATE_FINISHED)
	StateFailed    = AppState(messages.RmAppState_RM_APP_STATE_FAILED)
	StateKilled    = AppState(messages.RmAppState_RM_APP_STATE_KILLED)
)

// String returns the state's name as YARN prints it ("RUNNING").
func (s AppState) String() string {
	return strings.TrimPrefix(messages.RmAppState(s).String(), "RM_APP_STATE_")
}

// Terminal reports whether the state is FINISHED, FAILED or KILLED.
func (s AppState) Terminal() bool {
	return s == StateFinished || s == StateFailed || s == StateKilled
}

// FinalStatus is the outcome of an application (YARN's FinalApplicationStatus).
type FinalStatus int32

// Final statuses.
const (
	FinalUndefined = FinalStatus(messages.RmFinalStatus_RM_FINAL_STATUS_UNDEFINED)
	FinalSucceeded = FinalStatus(messages.RmFinalStatus_RM_FINAL_STATUS_SUCCEEDED)
	FinalFailed    = FinalStatus(messages.RmFinalStatus_RM_FINAL_STATUS_FAILED)
	FinalKilled    = FinalStatus(messages.RmFinalStatus_RM_FINAL_STATUS_KILLED)
)

// String returns the status's name ("SUCCEEDED").
func (s FinalStatus) String() string {
	return strings.TrimPrefix(messages.RmFinalStatus(s).String(), "RM_FINAL_STATUS_")
}

// Resource is an amount of memory (MiB) and cores.
type Resource struct {
	MemoryMB int64
	Cores    int
}

// Fits reports whether r fits within capacity c.
func (r Resource) Fits(c Resource) bool { return r.MemoryMB <= c.MemoryMB && r.Cores <= c.Cores }

// Add returns r + o.
func (r Resource) Add(o Resource) Resource {
	return Resource{MemoryMB: r.MemoryMB + o.MemoryMB, Cores: r.Cores + o.Cores}
}

// Sub returns r - o.
func (r Resource) Sub(o Resource) Resource {
	return Resource{MemoryMB: r.MemoryMB - o.MemoryMB, Cores: r.Cores - o.Cores}
}

func (r Resource) Proto() *messages.RmResource {
	return &messages.RmResource{MemoryMb: r.MemoryMB, Cores: int32(r.Cores)}
}

func ResourceFromProto(p *messages.RmResource) Resource {
	return Resource{MemoryMB: p.GetMemoryMb(), Cores: int(p.GetCores())}
}

func lower(s string) string { return strings.ToLower(s) }

func joinNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// AppStates returns the application states, in lifecycle order.
func AppStates() []AppState {
	return []AppState{StateNew, StateSubmitted, StateAccepted, StateRunning, StateFinished, StateFailed, StateKilled}
}

// ActiveAppStates returns the states `yarn application -list` shows by default:
// applications that have not ended yet.
func ActiveAppStates() []AppState {
	return []AppState{StateSubmitted, StateAccepted, StateRunning}
}

// ParseAppState parses a state name as YARN prints it ("RUNNING"; any
// case). The error wraps ErrInvalidState.
func ParseAppState(s string) (AppState, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	for _, st := range AppStates() {
		if st.String() == name {
			return st, nil
		}
	}
	names := make([]string, len(AppStates()))
	for i, st := range AppStates() {
		names[i] = st.String()
	}
	return 0, fmt.Errorf("%w %q (expected one of %s)", ErrInvalidState, s, strings.Join(names, ", "))
}
