//go:build !unix

package cli

// CloseInheritedOnExec does nothing where file descriptors are not
// inherited across exec as on Unix.
func CloseInheritedOnExec() {}
