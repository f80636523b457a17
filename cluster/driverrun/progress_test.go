package driverrun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
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

// The bar is for a console: on a file (stderr redirected) nothing is drawn
// unless spark.ui.showConsoleProgress asks for it.
func TestConsoleProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name string
		out  io.Writer
		conf map[string]string
		want bool
	}{
		{"file", f, nil, false},
		{"pipe", w, nil, false},
		{"buffer", &lockedBuffer{}, nil, false},
		{"file, asked for", f, map[string]string{KeyShowConsoleProgress: "true"}, true},
		{"file, turned off", f, map[string]string{KeyShowConsoleProgress: "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			for k, v := range tc.conf {
				conf.Set(k, v)
			}
			dc, err := cluster.ParseDriverConf(conf)
			if err != nil {
				t.Fatal(err)
			}
			if got := showConsoleProgress(dc, tc.out); got != tc.want {
				t.Fatalf("showConsoleProgress = %v, want %v", got, tc.want)
			}
		})
	}
}
