// This file holds Log, the reading of one event log, from its start or
// incrementally, and Replay.

package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// maxProblems is how many Problems a Result lists; the rest are only
// counted.
const maxProblems = 100

// Problem is a line of a log that was skipped: it did not decode, or it
// was cut short (the last line of a log whose writer stopped in the middle
// of it).
type Problem struct {
	File string // the file's path
	Line int    // the line's number in the file, from 1
	Err  error
}

// Error implements error.
func (p Problem) Error() string { return fmt.Sprintf("%s:%d: %v", p.File, p.Line, p.Err) }

// ErrTruncated is the Err of a Problem for a last line cut short.
var ErrTruncated = errors.New("eventlog: truncated line")

// Result is what a reading of a log delivered and skipped.
type Result struct {
	Events   int       // events delivered to the listener
	Skipped  int       // lines skipped (corrupt or truncated)
	Problems []Problem // the first 100 of the lines skipped
	// Restarted reports that the log's file was shorter than what had
	// been read of it (replaced, e.g. with spark.eventLog.overwrite):
	// the reading started again from its start, and a listener that
	// built something from the earlier readings must start again too.
	Restarted bool
}

func (r *Result) skip(p Problem) {
	r.Skipped++
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, p)
	}
}

// Log reads one event log (a single file or a rolling folder, compressed
// or not, in progress or finished) and remembers how far it has read:
// each Update delivers the events of the lines completed since the last.
// An uncompressed file is read on from where the last Update stopped; a
// compressed one is decompressed from its start again (a rolling log's
// finished files are not read again), its lines already delivered
// skipped. A Log is used by one goroutine at a time.
type Log struct {
	path    string // the single file without ".inprogress", or the rolling folder
	rolling bool
	dec     decoder

	index  int   // rolling: the index of the events file being read
	offset int64 // uncompressed: bytes of the file read
	lines  int   // lines of the file read (compressed: how many to skip)
	limit  int   // > 0: the lines of a file to read at most

	maxLine int64 // > 0: the longest line decoded (a test's), else MaxLineSize
	budget  int64 // > 0: the bytes of a file to read at most (a peek's)
	// cut says a reading reported (once) that the compressed file being
	// read stops short: its finished stream ends in the middle, or it
	// decompresses past its bound (ErrExpands).
	cut bool
	// appOnly: only the application's start and end are decoded (see
	// OpenApplicationEvents).
	appOnly bool
}

// Open returns the Log at path: a log's file (with or without its
// ".inprogress" suffix) or a rolling log's folder. Nothing is read before
// Update.
func Open(path string) *Log {
	path = strings.TrimSuffix(filepath.Clean(path), inProgressSuffix)
	st, err := os.Lstat(path)
	rolling := strings.HasPrefix(filepath.Base(path), rollingDirPrefix) || (err == nil && st.IsDir())
	return &Log{path: path, rolling: rolling}
}

// OpenApplicationEvents is Open for a Log that delivers only the
// application's start and end (endpoints.ApplicationStart and
// ApplicationEnd): the lines of other events, jobs and tasks, are skipped
// without being decoded, so that a listing of a folder of many logs costs
// a scan of their bytes rather than the decoding of every task of every
// application. What it skips it does not check: the problems of those
// lines are reported by a Log of Open.
func OpenApplicationEvents(path string) *Log {
	lg := Open(path)
	lg.appOnly = true
	return lg
}

// Replay delivers every event of the log at path (see Open) to l, in
// order, and reports the lines it skipped, a last line cut short among
// them.
func Replay(path string, l endpoints.Listener) (Result, error) {
	return Open(path).read(l, true)
}

// Update delivers to l the events of the lines completed since the last
// Update. A line not ended yet is left for the next Update while the log
// is in progress; once it is finished, it is skipped as truncated.
func (lg *Log) Update(l endpoints.Listener) (Result, error) { return lg.read(l, false) }

func (lg *Log) read(l endpoints.Listener, final bool) (Result, error) {
	var res Result
	if !lg.rolling {
		p, done := lg.path, true
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			p, done = p+inProgressSuffix, false
		}
		return res, lg.readFile(p, final || done, l, &res)
	}
	files, done, err := rollingFiles(lg.path)
	if err != nil {
		return res, err
	}
	for i, f := range files {
		if f.index < lg.index {
			continue
		}
		if f.index > lg.index {
			lg.index, lg.offset, lg.lines, lg.cut = f.index, 0, 0, false
		}
		last := i == len(files)-1
		if err := lg.readFile(f.path, final || done || !last, l, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// eventsFile is a rolling log's events file.
type eventsFile struct {
	index int
	path  string
}

// rollingFiles returns the events files of a rolling folder in order (its
// regular files named as events files), and whether the log is finished.
func rollingFiles(dir string) (files []eventsFile, done bool, err error) {
	// The folder itself must be one of the log folder's: a symbolic link
	// would lead out of it.
	if st, err := os.Lstat(dir); err != nil {
		return nil, false, fmt.Errorf("eventlog: %w", err)
	} else if !st.IsDir() {
		return nil, false, fmt.Errorf("eventlog: %w: %s (%s)", ErrNotRegular, dir, st.Mode().Type())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("eventlog: %w", err)
	}
	for _, e := range ents {
		n := e.Name()
		if i, ok := eventsFileIndex(n); ok && e.Type().IsRegular() {
			// Regular files only, as List takes the folder's own
			// entries: a symbolic link would lead out of the folder.
			files = append(files, eventsFile{index: i, path: filepath.Join(dir, n)})
		}
		if strings.HasPrefix(n, appStatusPrefix) && !strings.HasSuffix(n, inProgressSuffix) {
			done = true
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].index < files[j].index })
	return files, done, nil
}

// readFile delivers the lines of file p after those already read; with
// final, a last line without its end is skipped as truncated, else it is
// left for the next read.
func (lg *Log) readFile(p string, final bool, l endpoints.Listener, res *Result) error {
	f, err := openLog(p)
	if err != nil {
		return err
	}
	defer f.Close()
	compressed := strings.HasSuffix(strings.TrimSuffix(p, inProgressSuffix), codecSuffix)
	expansion := int64(minExpansionBudget) // compressed: the work this reading may do
	size := int64(-1)                      // the file's, when known
	if st, err := f.Stat(); err == nil {
		if !compressed && st.Size() < lg.offset {
			lg.offset, lg.lines, res.Restarted = 0, 0, true
		}
		expansion = max(expansion, st.Size()*maxExpansion)
		size = st.Size()
	}
	br, skip, done, err := lg.stream(f, compressed, size)
	if err != nil {
		return err
	}
	defer done()
	var long []byte
	var longN int64 // bytes of the line being read, before b
	var read int64  // bytes read, for the budget
	for lg.limit <= 0 || lg.lines < lg.limit {
		b, err := br.ReadSlice('\n')
		if read += int64(len(b)); lg.budget > 0 && read > lg.budget {
			return nil // a peek reads no further
		}
		if compressed && !lg.spend(&expansion, len(b), p, res) {
			return nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if longN += int64(len(b)); longN <= lg.lineCap() {
				long = append(long, b...)
			} else {
				long = nil // too long: only counted, up to its end
			}
			continue
		}
		size, tooLong := longN+int64(len(b)), longN+int64(len(b)) > lg.lineCap()
		if long != nil {
			b = append(long, b...)
		}
		long, longN = nil, 0
		if err != nil && skip > 0 && final && size == 0 {
			// A compressed log with fewer lines than were read of it:
			// replaced; the next reading starts from its start.
			lg.lines, lg.cut, res.Restarted = 0, false, true
			return nil
		}
		if err != nil {
			// io.EOF, or a compressed stream cut short: what was
			// decoded is all there is for now.
			cut := final && compressed && !errors.Is(err, io.EOF)
			if size > 0 && final && skip == 0 { // (skip > 0: it was read before)
				lg.offset += size
				lg.lines++
				lg.deliverOrSkip(p, b, tooLong, true, l, res)
				lg.cut = lg.cut || cut // the line it cuts says so
			}
			if cut && !lg.cut {
				// A finished file whose stream stops short between two
				// lines was damaged: the rest of its events are lost.
				lg.cut = true
				res.skip(Problem{File: p, Line: lg.lines + 1, Err: fmt.Errorf("%w: the compressed stream ends early (%v)", ErrTruncated, err)})
			}
			return nil
		}
		if skip > 0 {
			skip--
			continue
		}
		lg.offset += size
		lg.lines++
		lg.deliverOrSkip(p, b, tooLong, false, l, res)
	}
	return nil
}

// maxZstdWindow is the largest window a compressed log may declare. The
// decoder keeps a buffer of up to twice the window, and a frame's header
// alone names it: without a bound a 10-byte file made each reading take
// 1 GiB. This package writes with a window of a few MiB, Spark's zstd at its
// default level with less; a log written with a longer window (zstd's
// --long) reads as cut where that frame begins.
const maxZstdWindow = 16 << 20

// stream returns the reader of f's lines after those already read: of a
// compressed file, its whole stream, whose first skip lines were read
// before; of another, the file from where the last reading stopped. done
// releases the decoder.
func (lg *Log) stream(f *os.File, compressed bool, size int64) (br *bufio.Reader, skip int, done func(), err error) {
	var r io.Reader = f
	done = func() {}
	// The buffer is no larger than what there is to read: a listing reads
	// every log of a folder, most of them small, and a buffer of 1 MiB
	// each was most of what it cost.
	bufSize := int64(1 << 20)
	if lg.budget > 0 {
		bufSize = min(lg.budget, 4<<10) // a peek: lines longer than it are read on
	}
	if size >= 0 {
		left := size - lg.offset + 1
		if compressed {
			left = size*16 + 1
		}
		bufSize = max(min(bufSize, left), 512)
	}
	if compressed {
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(lg.budget > 0 || size >= 0 && size < 1<<20),
			zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return nil, 0, nil, fmt.Errorf("eventlog: %w", err)
		}
		r, skip, done = zr, lg.lines, zr.Close
	} else if _, err := f.Seek(lg.offset, io.SeekStart); err != nil {
		return nil, 0, nil, fmt.Errorf("eventlog: %w", err)
	}
	return bufio.NewReaderSize(r, int(bufSize)), skip, done, nil
}

// spend takes a line of n bytes from left, what the reading of the
// compressed file p may still decompress, and reports whether the reading
// goes on. A line costs its bytes, a short one minLineCost (a line of a log
// is longer); past the bound the reading stops, which it reports once.
func (lg *Log) spend(left *int64, n int, p string, res *Result) bool {
	if *left -= max(int64(n), minLineCost); *left >= 0 {
		return true
	}
	if !lg.cut {
		lg.cut = true
		res.skip(Problem{File: p, Line: lg.lines + 1, Err: ErrExpands})
	}
	return false
}

// maxExpansion bounds what a reading of a compressed file decompresses:
// at most this many times the file's size (and at least
// minExpansionBudget), each line counted as minLineCost bytes at least.
// A real log compresses some 10 to 100 times; without a bound, a zstd
// frame of RLE blocks made 4 bytes of file 128 KiB of empty lines, and a
// 130 KB file kept the folder's reading busy for minutes.
const (
	maxExpansion       = 1000
	minExpansionBudget = 16 << 20
	minLineCost        = 64
)

// ErrExpands is the Err of a Problem for a compressed file that
// decompresses to more than maxExpansion times its size: the rest of it
// is not read.
var ErrExpands = fmt.Errorf("eventlog: a compressed file decompresses to over %d times its size", maxExpansion)

// MaxLineSize bounds a line that a reader decodes: 16 MiB, far over any
// line a writer writes (a failed task's error, an environment of
// thousands of properties). A longer line is read to its end without
// being kept, and skipped as a Problem (ErrLineTooLong).
const MaxLineSize = 16 << 20

// ErrLineTooLong is the Err of a Problem for a line over MaxLineSize.
var ErrLineTooLong = fmt.Errorf("eventlog: line over %d bytes", MaxLineSize)

// lineCap is the longest line lg decodes.
func (lg *Log) lineCap() int64 {
	if lg.maxLine > 0 {
		return lg.maxLine
	}
	return MaxLineSize
}

// deliverOrSkip delivers line b, or skips it as too long.
func (lg *Log) deliverOrSkip(p string, b []byte, tooLong, unended bool, l endpoints.Listener, res *Result) {
	if tooLong {
		res.skip(Problem{File: p, Line: lg.lines, Err: ErrLineTooLong})
		return
	}
	lg.deliver(p, b, unended, l, res)
}

// deliver decodes one line and delivers its event, or records why not.
func (lg *Log) deliver(p string, b []byte, unended bool, l endpoints.Listener, res *Result) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if lg.appOnly && !unended {
		if name, ok := eventName(b); ok && !applicationEvent(name) {
			return
		}
	}
	ev, ok, err := lg.dec.decode(b)
	if err == nil && !ok && unended && !json.Valid(b) {
		// A line of an event it does not know is ignored undecoded; cut
		// short, it is still reported.
		var v any
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		if unended {
			err = fmt.Errorf("%w: %v", ErrTruncated, err)
		}
		res.skip(Problem{File: p, Line: lg.lines, Err: err})
		return
	}
	if ok {
		l.OnEvent(ev)
		res.Events++
	}
}
