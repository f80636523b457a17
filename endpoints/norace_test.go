//go:build !race

package endpoints_test

const raceEnabled = false
