//go:build race

package testutil

// race.go and norace.go hold RaceEnabled.

// RaceEnabled reports whether the tests run under the race detector, which
// allocates and schedules differently: allocation bounds are checked
// without it.
const RaceEnabled = true
