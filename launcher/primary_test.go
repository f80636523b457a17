package launcher

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/cli"
)

// isLauncherProgram finds the mark wherever it is: at the start, across
// the boundary of two reads, at the end; and not in a file without it.
func TestIsLauncherProgram(t *testing.T) {
	dir := t.TempDir()
	mark := []byte(programMark)
	const chunk = 1 << 20 // isLauncherProgram's read size
	for name, at := range map[string]int{"start": 0, "across two reads": chunk - len(mark)/2, "at the end": 3*chunk - len(mark), "none": -1} {
		b := bytes.Repeat([]byte{'x'}, 3*chunk)
		if at >= 0 {
			copy(b[at:], mark)
		}
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := isLauncherProgram(path); err != nil || got != (at >= 0) {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	if _, err := isLauncherProgram(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// The primary resource: spark-internal, this program, a program that is
// not one, a missing one, a folder; each mistake a usage error that says
// what was expected.
func TestResolvePrimary(t *testing.T) {
	if p, err := resolvePrimary("", []string{InternalResource, "1"}); err != nil || p != (primary{}) {
		t.Fatalf("spark-internal: %+v, %v", p, err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := resolvePrimary("", []string{self}); err != nil || p.program != self || p.other {
		t.Fatalf("this program: %+v, %v", p, err)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		positional []string
		want       string
	}{
		{"none", nil, "missing the primary resource"},
		{"missing", []string{filepath.Join(dir, "nope")}, "no such program"},
		{"a folder", []string{dir}, "is not an executable program"},
		{"not built on the launcher", []string{plain}, "is not a program built on package launcher"},
	} {
		_, err := resolvePrimary("", tc.positional)
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
}

// The application TestMissingPrimaryHint names, registered once per
// process (a second run, -count, must not register it again).
func init() {
	cluster.RegisterApp("launcher.test.Hinted", func(context.Context, *cluster.AppContext, []string) error { return nil })
}

// A missing resource that is a number or a name gets the hint to run the
// compiled-in application with those arguments (the form of submit before
// the primary resource); one that names a path does not: the user meant a
// program, and the hint would pass its path to the application.
func TestMissingPrimaryHint(t *testing.T) {
	hint := "--class launcher.test.Hinted spark-internal"
	for _, tc := range []struct {
		positional []string
		hinted     bool
	}{
		{[]string{"10"}, true},
		{[]string{"10", "20"}, true},
		{[]string{"./no-such-program", "2"}, false},
		{[]string{"bin/no-such-program"}, false},
		{[]string{filepath.Join(t.TempDir(), "nope")}, false},
		{[]string{"../nope"}, false},
	} {
		_, err := resolvePrimary("launcher.test.Hinted", tc.positional)
		if err == nil || strings.Contains(err.Error(), hint) != tc.hinted {
			t.Errorf("%q: %v, want the hint %v", tc.positional, err, tc.hinted)
		}
	}
}
