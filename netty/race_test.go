//go:build race

package netty_test

const raceEnabled = true
