//go:build !unix

package regularfile

// Elsewhere the open of a FIFO does not wait for a writer, and symbolic
// links are followed.
const (
	nonBlock = 0
	noFollow = 0
)

func isLoop(error) bool { return false }
