// This file holds List, the scan of a folder of event logs.

package eventlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// Info describes one event log of a folder.
type Info struct {
	// Path is the log's file (as it is now, maybe ".inprogress") or
	// rolling folder: what Open takes.
	Path string
	// AppID and AttemptID are those of the log's ApplicationStart; before
	// it is written, AppID is the name of the file (the id as made safe
	// for a file name).
	AppID, AttemptID string
	InProgress       bool
	Rolling          bool
	Compressed       bool
	// Size is the size of its files in bytes, ModTime the time the last
	// was written.
	Size    int64
	ModTime time.Time
}

// List returns the event logs in dir, sorted by path: every file and
// rolling folder that is not hidden (its name starting with ".").
func List(dir string) ([]Info, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	var out []Info
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		p := filepath.Join(dir, n)
		var in Info
		var err error
		switch {
		case e.IsDir() && strings.HasPrefix(n, rollingDirPrefix):
			in, err = rollingInfo(p)
		case e.Type().IsRegular():
			in, err = fileInfo(p)
		default:
			continue
		}
		if errors.Is(err, os.ErrNotExist) {
			continue // removed while listed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

func fileInfo(p string) (Info, error) {
	st, err := os.Stat(p)
	if err != nil {
		return Info{}, err
	}
	name := filepath.Base(p)
	in := Info{Path: p, Size: st.Size(), ModTime: st.ModTime()}
	name, in.InProgress = strings.CutSuffix(name, inProgressSuffix)
	name, in.Compressed = strings.CutSuffix(name, codecSuffix)
	in.AppID = name
	peekApp(p, &in)
	return in, nil
}

func rollingInfo(dir string) (Info, error) {
	in := Info{Path: dir, Rolling: true, InProgress: true,
		AppID: strings.TrimPrefix(filepath.Base(dir), rollingDirPrefix)}
	files, done, err := rollingFiles(dir)
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, err
	}
	if err != nil {
		// One log that cannot be read (a folder of another user's, mode
		// 0700) is listed as it is: its reader reports why, and the
		// folder's other logs are listed.
		return in, nil
	}
	in.InProgress = !done
	for _, f := range files {
		st, err := os.Lstat(f.path)
		if err != nil {
			return Info{}, err
		}
		in.Size += st.Size()
		if st.ModTime().After(in.ModTime) {
			in.ModTime = st.ModTime()
		}
		in.Compressed = strings.HasSuffix(f.path, codecSuffix)
	}
	if len(files) > 0 {
		peekApp(files[0].path, &in)
	}
	return in, nil
}

// peekLines is how many lines peekApp reads to find ApplicationStart: the
// Writer writes it second.
const peekLines = 8

// peekBudget bounds what peekApp reads of a log (decompressed): its
// first lines are short, and a log whose start is not is not worth more
// at every scan of its folder.
const peekBudget = 64 << 10

// peekApp sets in's ids from the ApplicationStart at the start of file p,
// when there is one.
func peekApp(p string, in *Info) {
	lg := &Log{path: p, limit: peekLines, maxLine: peekBudget, budget: peekBudget, appOnly: true}
	var res Result
	_ = lg.readFile(p, false, endpoints.ListenerFunc(func(ev endpoints.Event) {
		if as, ok := ev.(endpoints.ApplicationStart); ok {
			in.AppID, in.AttemptID = as.AppID, as.AttemptID
		}
	}), &res)
}
