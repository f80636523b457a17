package cluster

// This file holds the listing of applications by state.

import (
	"context"
	"fmt"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// AllAppStates are the application states, in lifecycle order.
var AllAppStates = []AppState{StateNew, StateSubmitted, StateAccepted, StateRunning, StateFinished, StateFailed, StateKilled}

// ActiveAppStates are the states `yarn application -list` shows by default:
// applications that have not ended yet.
var ActiveAppStates = []AppState{StateSubmitted, StateAccepted, StateRunning}

// ParseAppState parses a state name as YARN prints it ("RUNNING"; any
// case). The error wraps ErrInvalidState.
func ParseAppState(s string) (AppState, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	for _, st := range AllAppStates {
		if st.String() == name {
			return st, nil
		}
	}
	names := make([]string, len(AllAppStates))
	for i, st := range AllAppStates {
		names[i] = st.String()
	}
	return 0, fmt.Errorf("%w %q (expected one of %s)", ErrInvalidState, s, strings.Join(names, ", "))
}

// Applications returns the reports of the applications the resource
// manager knows whose state is one of states (every state when none is
// given), in submission order (YARN's getApplications).
func (c *Client) Applications(ctx context.Context, states ...AppState) ([]*AppReport, error) {
	req := &messages.RmGetApplications{}
	for _, s := range states {
		req.States = append(req.States, messages.RmAppState(s))
	}
	r, err := actor.AskAs[*messages.RmApplications](ctx, c.rm, req)
	if err != nil {
		return nil, err
	}
	out := make([]*AppReport, 0, len(r.GetApps()))
	for _, a := range r.GetApps() {
		out = append(out, reportFromProto(a))
	}
	return out, nil
}

// applications returns the reports of the applications in one of states
// (all when states is empty), in submission order.
func (c *rmCore) applications(states []messages.RmAppState) *messages.RmApplications {
	want := make(map[AppState]bool, len(states))
	for _, s := range states {
		want[AppState(s)] = true
	}
	out := &messages.RmApplications{}
	for _, id := range c.appOrder {
		a, ok := c.apps[id]
		if !ok || len(want) > 0 && !want[a.state] {
			continue
		}
		if r, err := c.report(id); err == nil {
			out.Apps = append(out.Apps, r)
		}
	}
	return out
}
