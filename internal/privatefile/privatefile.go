package privatefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirAll creates dir and its missing parents with mode 0700 (and
// makes dir itself 0700 if it existed).
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// WriteFile writes data to a new file at path, mode 0600.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Create creates or truncates the file at path with mode 0600.
func Create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// RemoveAll removes path and everything under it, as os.RemoveAll does,
// and also what is inside folders without write permission (an unpacked
// archive, a module cache, a folder a program made read-only), which the
// owner may remove once it makes them writable again. The folders are
// made writable through an os.Root of path, so that a folder that a
// running program swaps for a symbolic link meanwhile never leads the
// change of mode out of path.
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	// path itself first, from its parent (it may be unreadable), through
	// an os.Root of the parent for the same reason.
	if parent, perr := os.OpenRoot(filepath.Dir(path)); perr == nil {
		_ = parent.Chmod(filepath.Base(path), 0o700)
		parent.Close()
	}
	root, rerr := os.OpenRoot(path)
	if rerr != nil {
		return err
	}
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = root.Chmod(p, 0o700)
		}
		return nil
	})
	root.Close()
	return os.RemoveAll(path)
}
