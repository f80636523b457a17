//go:build race

package sim_test

// raceEnabled reports a build with the race detector.
const raceEnabled = true
