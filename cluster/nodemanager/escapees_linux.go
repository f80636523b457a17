// The processes of a container that left its process group, on Linux.

package nodemanager

import (
	"bytes"
	"os"
	"strconv"
)

// escapees returns the live processes, outside process group pgid, whose
// environment still says they belong to container id (CONTAINER_ID, which
// every process of the container inherits): those a process of the
// container started in a session or group of their own (setsid, a shell's
// job control), which a signal to the group does not reach. A process that
// also cleared its environment is not found: only a cgroup would hold it.
func escapees(id string, pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("CONTAINER_ID=" + id)
	self := os.Getpid()
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !hasEntry(env, want) {
			continue
		}
		if state, group, ok := procState(e.Name()); ok && state != "Z" && group != pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasEntry reports whether the NUL-separated environment env holds entry.
func hasEntry(env, entry []byte) bool {
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return true
		}
	}
	return false
}
