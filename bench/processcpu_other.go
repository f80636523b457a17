//go:build !unix

package bench

import "time"

// processCPU reports that the process's CPU time is not known here.
func processCPU() (time.Duration, bool) { return 0, false }
