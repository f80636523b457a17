// This file holds logFile, the files of one log being written: created
// as the layout says (layout.go), compressed, rolled, and renamed when the
// log is finished.

package eventlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// ErrLogExists is returned by Writer.Start when the application's log is
// already in the folder and Config.Overwrite (spark.eventLog.overwrite)
// is false.
var ErrLogExists = errors.New("eventlog: the application's event log already exists")

// logFile writes the lines of one log. It is used by one goroutine at a
// time.
type logFile struct {
	cfg  Config
	name string // logName of the application
	// wrap, when not nil, wraps each file opened (a test's seam).
	wrap func(io.Writer) io.Writer

	path  string // the single file's final path, or the rolling folder's
	index int    // the rolling events file being written, from 1
	f     *os.File
	zw    *zstd.Encoder
	bw    *bufio.Writer
	size  int64 // bytes of lines written to the current file
}

// createLog creates appID's log in cfg.Dir: its in-progress file, or its
// rolling folder with its first events file and in-progress marker.
func createLog(cfg Config, appID, attemptID string, wrap func(io.Writer) io.Writer) (*logFile, error) {
	if st, err := os.Stat(cfg.Dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return nil, fmt.Errorf("%s: the event log folder %s: %w", KeyDir, cfg.Dir, err)
	}
	l := &logFile{cfg: cfg, name: logName(appID, attemptID), wrap: wrap}
	if !cfg.Rolling {
		l.path = filepath.Join(cfg.Dir, l.name)
		if cfg.Compress {
			l.path += codecSuffix
		}
		for _, p := range []string{l.path, l.path + inProgressSuffix} {
			if err := l.replace(p, os.Remove); err != nil {
				return nil, err
			}
		}
		return l, l.open(l.path + inProgressSuffix)
	}
	l.path = filepath.Join(cfg.Dir, rollingDirPrefix+l.name)
	if err := l.replace(l.path, os.RemoveAll); err != nil {
		return nil, err
	}
	if err := os.Mkdir(l.path, dirPerm); err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	if err := os.WriteFile(l.statusPath()+inProgressSuffix, nil, filePerm); err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	l.index = 1
	return l, l.open(filepath.Join(l.path, eventsFileName(l.index, l.name, cfg.Compress)))
}

// replace fails with ErrLogExists when p exists, unless the config says
// to overwrite: then p is removed.
func (l *logFile) replace(p string, remove func(string) error) error {
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if !l.cfg.Overwrite {
		return fmt.Errorf("%w: %s (set %s to replace it)", ErrLogExists, p, KeyOverwrite)
	}
	if err := remove(p); err != nil {
		return fmt.Errorf("eventlog: replacing %s: %w", p, err)
	}
	return nil
}

func (l *logFile) statusPath() string { return filepath.Join(l.path, appStatusPrefix+l.name) }

// open starts writing the file p.
func (l *logFile) open(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return fmt.Errorf("eventlog: %w", err)
	}
	var w io.Writer = f
	if l.wrap != nil {
		w = l.wrap(f)
	}
	l.f, l.zw, l.size = f, nil, 0
	if l.cfg.Compress {
		zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("eventlog: %w", err)
		}
		l.zw, w = zw, zw
	}
	l.bw = bufio.NewWriterSize(w, l.cfg.bufferSize())
	return nil
}

// write writes whole lines, rolling to the next file before a line that
// would take a rolling log's file over its maximum size.
func (l *logFile) write(p []byte) error {
	for len(p) > 0 {
		n := len(p)
		if l.cfg.Rolling {
			n = l.fits(p)
			if n == 0 {
				if err := l.roll(); err != nil {
					return err
				}
				continue
			}
		}
		if _, err := l.bw.Write(p[:n]); err != nil {
			return err
		}
		l.size += int64(n)
		p = p[n:]
	}
	return nil
}

// fits returns how many bytes of p's lines fit in the current file: 0
// when the next line must go to the next file. A line longer than the
// maximum goes alone in a file.
func (l *logFile) fits(p []byte) int {
	room := l.cfg.maxFileSize() - l.size
	if int64(len(p)) <= room {
		return len(p)
	}
	if room > 0 {
		if i := bytes.LastIndexByte(p[:room], '\n'); i >= 0 {
			return i + 1
		}
	}
	if l.size > 0 {
		return 0
	}
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		return i + 1
	}
	return len(p)
}

// roll closes the current events file and opens the next.
func (l *logFile) roll() error {
	if err := l.closeFile(); err != nil {
		return err
	}
	l.index++
	return l.open(filepath.Join(l.path, eventsFileName(l.index, l.name, l.cfg.Compress)))
}

// flush makes what was written readable: the buffer is written, and a
// compressed file's block ended.
func (l *logFile) flush() error {
	if err := l.bw.Flush(); err != nil {
		return err
	}
	if l.zw != nil {
		return l.zw.Flush()
	}
	return nil
}

func (l *logFile) closeFile() error {
	err := l.bw.Flush()
	if l.zw != nil {
		err = errors.Join(err, l.zw.Close())
	}
	return errors.Join(err, l.f.Close())
}

// finish closes the log and marks it finished: the single file renamed
// without ".inprogress", or the rolling folder's marker. With abandon
// (a log whose writes failed) the files are closed and left in progress.
func (l *logFile) finish(abandon bool) error {
	err := l.closeFile()
	if abandon || err != nil {
		return err
	}
	if !l.cfg.Rolling {
		return os.Rename(l.path+inProgressSuffix, l.path)
	}
	return os.Rename(l.statusPath()+inProgressSuffix, l.statusPath())
}
