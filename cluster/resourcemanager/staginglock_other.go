//go:build !unix

package resourcemanager

// lockStaging does not lock on this system: a resource manager takes
// itself for the staging folder's only one.
func lockStaging(string) (alone bool, share, release func(), err error) {
	return true, func() {}, func() {}, nil
}
