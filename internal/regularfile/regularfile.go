package regularfile

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is the error of a file that is not a regular file: a FIFO,
// a device, a folder, or with OpenNoFollow a symbolic link.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the regular file at path for reading, following symbolic
// links.
func Open(path string) (*os.File, error) { return checked(os.OpenFile(path, os.O_RDONLY|nonBlock, 0)) }

// OpenNoFollow opens the regular file at path for reading, and refuses a
// symbolic link (where the system can tell, see noFollow).
func OpenNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock|noFollow, 0)
	if isLoop(err) {
		return nil, fmt.Errorf("%w: %s is a symbolic link", ErrNotRegular, path)
	}
	return checked(f, err)
}

// OpenIn opens the regular file name of root for reading (os.Root keeps it
// inside root).
func OpenIn(root *os.Root, name string) (*os.File, error) {
	return checked(root.OpenFile(name, os.O_RDONLY|nonBlock, 0))
}

// checked returns f when it is a regular file, else closes it and returns
// an error that matches ErrNotRegular.
func checked(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s (%s)", ErrNotRegular, f.Name(), st.Mode().Type())
	}
	return f, nil
}
