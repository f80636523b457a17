//go:build unix

package cli

import (
	"os"
	"strconv"
	"syscall"
)

// CloseInheritedOnExec marks close-on-exec every file descriptor from 3 up
// that the process holds. Go opens its own files close-on-exec; what is
// left is what the process inherited from a shell or a supervisor, which the
// processes it starts (a node manager's containers: tenants' code) would
// otherwise inherit in turn. Files handed to a child on purpose
// (exec.Cmd.ExtraFiles) are not affected: the child gets its own copies.
func CloseInheritedOnExec() {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
				syscall.CloseOnExec(fd)
			}
		}
		return
	}
}
