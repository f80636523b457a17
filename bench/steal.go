// The CPU time a hypervisor took from the machine during a run.

package bench

import "github.com/prometheus/procfs"

// cpuTimes is a reading of the machine's CPU time counters, in seconds
// summed over its CPUs since boot.
type cpuTimes struct {
	steal, total float64
}

// readCPUTimes reads the machine's CPU times; ok is false where the kernel
// does not report them (outside Linux).
func readCPUTimes() (t cpuTimes, ok bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return cpuTimes{}, false
	}
	st, err := fs.Stat()
	if err != nil {
		return cpuTimes{}, false
	}
	c := st.CPUTotal
	// Guest time is counted in user time already.
	total := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	return cpuTimes{steal: c.Steal, total: total}, true
}

// stolen returns the fraction of the machine's CPU time between the
// readings a and b that the hypervisor gave to others (steal time), or
// false when no time passed between them.
func stolen(a, b cpuTimes) (float64, bool) {
	total := b.total - a.total
	if total <= 0 {
		return 0, false
	}
	return min(1, max(0, (b.steal-a.steal)/total)), true
}

// recordSteal sets StolenCPU from the reading taken at the start of the run
// (when known) and one taken now.
func (rep *Report) recordSteal(start cpuTimes, known bool) {
	if !known {
		return
	}
	if now, ok := readCPUTimes(); ok {
		if f, ok := stolen(start, now); ok {
			rep.StolenCPU = &f
		}
	}
}
