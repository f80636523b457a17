// Env.FetchFile: a download of a spark:// file URI into a directory, as Spark's Utils.fetchFile.

package actor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FetchFile downloads uri (see OpenChannel) into the directory dir, as
// Spark's Utils.fetchFile does, and returns the file's path: dir and the
// URI's last segment, unescaped, which must be a plain file name. The
// bytes go to a temporary file in dir, mode 0600, renamed to that name once
// complete: a failed or cancelled download leaves nothing behind, and
// nobody sees a partial file under the name. A file already there with the
// same contents is kept; one with other contents is a *FileError matching
// ErrFileExists, unless spark.files.overwrite is true. The other failures
// are those of OpenChannel, and the file system's.
func (e *Env) FetchFile(ctx context.Context, uri, dir string) (string, error) {
	u, err := parseFileURI("fetch", uri)
	if err != nil {
		return "", err
	}
	name, err := fileName(u.path)
	if err != nil || !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		return "", &FileError{Op: "fetch", URI: uri, Err: ErrInvalidFileURI, Detail: "its last segment is not a file name"}
	}
	conf := e.FileServer()
	if conf.confErr != nil {
		return "", conf.confErr
	}
	rc, err := e.OpenChannel(ctx, uri)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	tmp, err := download(rc, dir)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(dir, name)
	same, err := sameContents(dest, tmp)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
	case same:
		err = os.Remove(tmp)
		return dest, err
	case err == nil && !conf.conf.overwrite:
		err = &FileError{Op: "fetch", URI: uri, Err: ErrFileExists, Detail: "File " + dest + " exists and does not match contents of " + uri}
	default:
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return dest, nil
}

// download copies r into a new temporary file in dir, mode 0600, and
// returns its path; on a failure it removes the file.
func download(r io.Reader, dir string) (path string, err error) {
	f, err := os.CreateTemp(dir, "fetchFileTemp*")
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// sameContents reports whether the files at a and b hold the same bytes;
// the error matches fs.ErrNotExist when a does not exist.
func sameContents(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	sa, err := fa.Stat()
	if err != nil {
		return false, err
	}
	sb, err := fb.Stat()
	if err != nil || sa.Size() != sb.Size() {
		return false, err
	}
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, erra := io.ReadFull(fa, ba)
		nb, errb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if erra == io.EOF || erra == io.ErrUnexpectedEOF {
			return errb == erra, nil
		}
		if erra != nil {
			return false, erra
		}
		if errb != nil {
			return false, errb
		}
	}
}
