package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// --files is a comma-separated list that spark-submit splits as
// Utils.stringToSeq does: on every comma, each entry trimmed, empty entries
// dropped, no quoting. A list written with spaces after the commas, one
// with a trailing comma, and a file whose name holds a double quote must
// all be accepted.
func TestFilesListIsSplitAsSparkDoes(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	for _, name := range []string{"a.txt", "b.txt", `we"ird.txt`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, files := range []string{"a.txt, b.txt", "a.txt,b.txt,", `we"ird.txt`} {
		t.Run(files, func(t *testing.T) {
			p := startIn(t, marker, dir, nil, "submit", "--master", "local[1]", "--files", files, "--class", "SparkPi", "spark-internal", "1")
			if code := p.wait(t, time.Minute); code != 0 {
				t.Fatalf("--files %q: exit %d\n%s", files, code, p.stderr)
			}
		})
	}
}
