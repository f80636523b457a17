package eventlog_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine is still running after every
// test and example has finished.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
