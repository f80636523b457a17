package regularfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/regularfile"
)

// Regular files open, through a symbolic link too unless OpenNoFollow; a
// FIFO (without waiting for a writer), a device and a folder do not.
func TestOnlyRegularFilesOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, c := range []struct {
		name string
		open func() (*os.File, error)
		ok   bool
	}{
		{"Open(file)", func() (*os.File, error) { return regularfile.Open(file) }, true},
		{"Open(link)", func() (*os.File, error) { return regularfile.Open(link) }, true},
		{"OpenNoFollow(file)", func() (*os.File, error) { return regularfile.OpenNoFollow(file) }, true},
		{"OpenIn(file)", func() (*os.File, error) { return regularfile.OpenIn(root, "file") }, true},
		{"OpenNoFollow(link)", func() (*os.File, error) { return regularfile.OpenNoFollow(link) }, false},
		{"Open(fifo)", func() (*os.File, error) { return regularfile.Open(fifo) }, false},
		{"OpenNoFollow(fifo)", func() (*os.File, error) { return regularfile.OpenNoFollow(fifo) }, false},
		{"OpenIn(fifo)", func() (*os.File, error) { return regularfile.OpenIn(root, "fifo") }, false},
		{"Open(/dev/null)", func() (*os.File, error) { return regularfile.Open(os.DevNull) }, false},
		{"Open(folder)", func() (*os.File, error) { return regularfile.Open(dir) }, false},
	} {
		f, err := c.open()
		if f != nil {
			f.Close()
		}
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && !errors.Is(err, regularfile.ErrNotRegular):
			t.Errorf("%s: %v, want an error that matches ErrNotRegular", c.name, err)
		}
	}
}
