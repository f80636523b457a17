//go:build unix

package resourcemanager

import (
	"os"
	"syscall"
)

// lockStaging locks the staging folder dir for a resource manager's life:
// shared, as other resource managers may run on it too. It reports
// whether no other resource manager holds it (alone), in which case the
// caller may remove what stopped or dead ones left there; the lock is
// exclusive until release or share is called. release unlocks it.
func lockStaging(dir string) (alone bool, share, release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, nil, nil, err
	}
	fd := int(f.Fd())
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		alone = true
	} else if err := syscall.Flock(fd, syscall.LOCK_SH); err != nil {
		f.Close()
		return false, nil, nil, err
	}
	share = func() {
		if alone {
			_ = syscall.Flock(fd, syscall.LOCK_SH)
		}
	}
	return alone, share, func() { f.Close() }, nil
}
