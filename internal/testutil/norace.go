//go:build !race

package testutil

// norace.go and race.go hold RaceEnabled.

// RaceEnabled reports whether the tests run under the race detector, which
// allocates and schedules differently: allocation bounds are checked
// without it.
const RaceEnabled = false
