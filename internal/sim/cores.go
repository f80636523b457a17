package sim

// This file holds the ledger of the invariant "an executor is never sent
// more tasks than its cores".

import (
	"maps"
	"slices"
)

// coreLedger counts, for each executor, the cores of the tasks the driver
// launched on it whose final status update has not reached the driver: a
// task holds its cores from its LaunchTask until then, and an executor
// never holds more than it has.
type coreLedger struct {
	tasks map[int64]heldCores // by task id
	held  map[string]int      // by executor id
}

// heldCores are the cores one task holds, on the executor it runs on.
type heldCores struct {
	exec  string
	cores int
}

// launched records the LaunchTask of task, of cpus cores (at least 1), to
// executor exec.
func (l *coreLedger) launched(task int64, exec string, cpus int) {
	if l.tasks == nil {
		l.tasks, l.held = make(map[int64]heldCores), make(map[string]int)
	}
	if old, ok := l.tasks[task]; ok { // launched again: the old launch no longer holds its cores
		l.held[old.exec] -= old.cores
	}
	h := heldCores{exec: exec, cores: max(1, cpus)}
	l.tasks[task] = h
	l.held[exec] += h.cores
}

// ended records that task's final status update from executor exec reached
// the driver: its cores are free again. An update from another executor
// frees nothing.
func (l *coreLedger) ended(task int64, exec string) {
	if h, ok := l.tasks[task]; ok && h.exec == exec {
		delete(l.tasks, task)
		l.held[exec] -= h.cores
	}
}

// over returns the first executor, by id, that holds more than cores, and
// how many it holds.
func (l *coreLedger) over(cores int) (exec string, n int, ok bool) {
	for _, id := range slices.Sorted(maps.Keys(l.held)) {
		if l.held[id] > cores {
			return id, l.held[id], true
		}
	}
	return "", 0, false
}
