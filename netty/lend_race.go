//go:build race

// What the race detector sees of a lent chunk's release (lend.go).

package netty

import (
	"runtime"
	"unsafe"
)

// raceReleased tells the race detector that the goroutine of the last
// release writes b, the released chunk's frame, as its next user will: a
// read of a borrowed message that is not ordered before its release (one
// kept past its handler without Retain) is then reported as a data race at
// once, whether or not the chunk is reused soon after.
func raceReleased(b []byte) {
	if len(b) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	}
}
