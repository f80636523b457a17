//go:build !race

// Without the race detector a lent chunk's release has nothing to tell it
// (lend_race.go).

package netty

// raceReleased does nothing without the race detector.
func raceReleased([]byte) {}
