// Finding a container's command as a shell would.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// lookPath finds file in the directories of path, as a shell does; a name with a slash is used as is.
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		if err := executable(file); err != nil {
			return "", fmt.Errorf("command %q: %w", file, err)
		}
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		cand := filepath.Join(dir, file)
		if executable(cand) == nil {
			return cand, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH %q", file, path)
}

func executable(file string) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", file)
	}
	return nil
}
