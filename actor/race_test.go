//go:build race

package actor_test

const raceEnabled = true
