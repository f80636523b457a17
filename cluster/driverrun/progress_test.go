package driverrun

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

type lockedBuffer = testutil.SyncBuffer

// On a terminal the application's output starts on a line of its own: the
// progress bar is cleared before it, never glued to it.
func TestResultNotGluedToProgressBar(t *testing.T) {
	term := &lockedBuffer{}
	var mu sync.Mutex
	done, version := 1, 1
	get := func() (int, int, int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return 0, 4, done, 1, version
	}
	bar := newConsoleProgress(term, true, time.Millisecond, get)
	testutil.Eventually(t, 10*time.Second, "the progress bar", func() bool { return strings.Contains(term.String(), "(1 + 1) / 4]") })
	out := bar.Above(term)
	fmt.Fprintln(out, "Pi is roughly 3.14")
	// The job goes on: the bar comes back below the output.
	mu.Lock()
	done, version = 2, 2
	mu.Unlock()
	testutil.Eventually(t, 10*time.Second, "the bar drawn again", func() bool { return strings.Contains(term.String(), "(2 + 1) / 4]") })
	bar.Stop()
	got := term.String()
	if !regexp.MustCompile(`\r {80}\rPi is roughly 3\.14\n`).MatchString(got) {
		t.Fatalf("the result does not start a line of its own: %q", got)
	}
	if !strings.HasSuffix(got, "\r"+strings.Repeat(" ", 80)+"\r") {
		t.Fatalf("Stop did not clear the bar: %q", got)
	}
}
