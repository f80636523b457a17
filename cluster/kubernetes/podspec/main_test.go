package podspec

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine is still running after every
// test has finished.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
