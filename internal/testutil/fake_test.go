package testutil_test

import (
	"fmt"
	"runtime"
	"testing"
)

// fakeT stands in for the testing.TB a helper is given, so that a test can
// see the helper fail it. Its Fatalf records the failure and ends the
// goroutine, as testing's does; run the helper with failed.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failed runs fn with a fakeT in a goroutine of its own, and returns the
// message fn failed it with ("" when it did not fail).
func failed(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg
}
