package testutil

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoBuild builds the Go program pkg into the executable out. pkg is an
// import path, or a folder (starting with "." or "/") that is built where
// it is, so that a module of its own (such as examples/sumofsquares) builds
// with its own go.mod. A failure's error holds the compiler's output.
func GoBuild(pkg, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", abs, pkg)
	if strings.HasPrefix(pkg, ".") || filepath.IsAbs(pkg) {
		cmd.Args[len(cmd.Args)-1] = "."
		cmd.Dir = pkg
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
