// Stats: what runs did, summed over seeds for the summary table.

package sim

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
)

// Stats counts what one run or many did.
type Stats struct {
	Seeds, Failed int
	steps         int
	sent, lost    int
	segments      int // TCP segments scheduled (netty seeds)
	netty         int // seeds run on netty
	halfOpenRaces int // half-open races run (tcprace.go)
	races         int
	faults        [numFaultKinds]int
	checks        map[string]int
}

// NewStats returns empty counts.
func NewStats() *Stats { return &Stats{checks: make(map[string]int)} }

func (s *Stats) check(name string) { s.checks[name]++ }

// Add adds o's counts to s.
func (s *Stats) Add(o *Stats) {
	s.Seeds += o.Seeds
	s.Failed += o.Failed
	s.steps += o.steps
	s.sent += o.sent
	s.lost += o.lost
	s.segments += o.segments
	s.netty += o.netty
	s.halfOpenRaces += o.halfOpenRaces
	s.races += o.races
	for k, n := range o.faults {
		s.faults[k] += n
	}
	for k, n := range o.checks {
		s.checks[k] += n
	}
}

// WriteTable writes the summary table: seeds, faults injected by kind,
// invariants checked, failures.
func (s *Stats) WriteTable(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "seeds\t%d\n", s.Seeds)
	fmt.Fprintf(tw, "failed\t%d\n", s.Failed)
	fmt.Fprintf(tw, "steps\t%d\n", s.steps)
	fmt.Fprintf(tw, "messages sent\t%d\n", s.sent)
	fmt.Fprintf(tw, "messages lost to faults\t%d\n", s.lost)
	fmt.Fprintf(tw, "seeds on netty\t%d\n", s.netty)
	fmt.Fprintf(tw, "TCP segments (netty seeds)\t%d\n", s.segments)
	fmt.Fprintf(tw, "half-open races (netty seeds)\t%d\n", s.halfOpenRaces)
	fmt.Fprintf(tw, "cancels racing a task's end\t%d\n", s.races)
	for k, n := range s.faults {
		fmt.Fprintf(tw, "fault: %s\t%d\n", faultKind(k), n)
	}
	for _, name := range slices.Sorted(maps.Keys(s.checks)) {
		fmt.Fprintf(tw, "checked: %s\t%d\n", name, s.checks[name])
	}
	tw.Flush()
}
