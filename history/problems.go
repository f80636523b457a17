package history

// This file holds problems, what the readings of one log could not read.

import (
	"fmt"
	"slices"

	"github.com/sparkrpc/sparkrpc/eventlog"
)

// maxProblems bounds the problems kept of one log.
const maxProblems = 20

// problems are what readings of a log could not read: the first
// maxProblems, and how many lines in all.
type problems struct {
	list    []string
	skipped int
}

// add records what a reading skipped, and err when it failed.
func (p *problems) add(r eventlog.Result, err error) {
	p.skipped += r.Skipped
	for _, pr := range r.Problems {
		if len(p.list) < maxProblems {
			p.list = append(p.list, pr.Error())
		}
	}
	if err != nil && len(p.list) < maxProblems {
		p.list = append(p.list, err.Error())
	}
}

// strings returns the problems as a page shows them.
func (p *problems) strings() []string {
	out := slices.Clone(p.list)
	if more := p.skipped - len(p.list); more > 0 && len(p.list) == maxProblems {
		out = append(out, fmt.Sprintf("and %d more lines skipped", more))
	}
	return out
}
