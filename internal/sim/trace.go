// The trace of a run: what happened, in order, for a person to read around
// a failure, and its hash, which tells two runs of one seed apart.

package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// traceContext is how many lines before a failure a report shows.
const traceContext = 60

// trace keeps the lines of a run: all of them when asked to (-trace), else
// the last traceContext and those that follow a failure.
type trace struct {
	w    *World
	keep bool // keep every line

	// lines and the hash are the loop's; notes come from other goroutines.
	lines  []string
	hash   [32]byte
	sum    uint64
	failAt int // index in lines of the first failure, -1 before
	mu     sync.Mutex
	notes  []string
	raced  string // the hash before the first armed race, if one ran
	// dir, when set, is a folder of this run's own (a random name): the
	// lines name it $DIR, so that they read the same in every run.
	dir string
	// rewrite, when set, rewrites every line (a netty seed's names).
	rewrite func(string) string
}

func newTrace(w *World) *trace { return &trace{w: w, failAt: -1} }

// add appends a line on the world's loop.
func (t *trace) add(format string, args ...any) {
	line := fmt.Sprintf("%s %s", fmtDur(t.w.now()), fmt.Sprintf(format, args...))
	t.append(line)
}

func (t *trace) append(line string) {
	if t.rewrite != nil {
		line = t.rewrite(line)
	}
	h := sha256.New()
	h.Write(t.hash[:])
	h.Write([]byte(line))
	copy(t.hash[:], h.Sum(nil))
	t.sum++
	t.lines = append(t.lines, line)
	if !t.keep && t.failAt < 0 && len(t.lines) > 4*traceContext {
		t.lines = slices.Delete(t.lines, 0, len(t.lines)-traceContext)
	}
}

// note records a line from a goroutine other than the loop's; notes are
// added, sorted, at the next idle point (flush), so that goroutines that
// run at one instant hash the same in any order.
func (t *trace) note(format string, args ...any) {
	line := fmt.Sprintf("%s %s", fmtDur(t.w.now()), fmt.Sprintf(format, args...))
	t.mu.Lock()
	t.notes = append(t.notes, line)
	t.mu.Unlock()
}

func (t *trace) flush() {
	t.mu.Lock()
	notes := t.notes
	t.notes = nil
	t.mu.Unlock()
	slices.Sort(notes)
	for _, l := range notes {
		t.append(l)
	}
}

func (t *trace) markFailure() {
	// Called from any goroutine: the index is a hint for the report.
	t.mu.Lock()
	t.notes = append(t.notes, fmt.Sprintf("%s FAILURE", fmtDur(t.w.now())))
	t.mu.Unlock()
}

// Hash is the hash of every line so far.
func (t *trace) Hash() string { return hex.EncodeToString(t.hash[:8]) }

// around returns the last lines kept, up to the failure and what followed.
func (t *trace) around() []string {
	if t.keep {
		return t.lines
	}
	from := max(0, len(t.lines)-2*traceContext)
	for i, l := range t.lines {
		if strings.HasSuffix(l, " FAILURE") {
			from = max(0, i-traceContext)
			return t.lines[from:min(len(t.lines), i+traceContext)]
		}
	}
	return t.lines[from:]
}

// describe is an envelope's line: its connection, the message's type and
// its scalar fields (reply-to ids, which are random, left out).
func describe(e *envelope, dir string) string {
	switch e.kind {
	case envConnected:
		return fmt.Sprintf("%s→%s connected", e.from, e.to)
	case envDisconnected:
		return fmt.Sprintf("%s→%s disconnected", e.from, e.to)
	}
	target := e.target.Id
	if strings.HasPrefix(target, "future$") {
		target = "reply"
	}
	ask := ""
	if e.sender != nil {
		ask = " ask"
	}
	return fmt.Sprintf("%s→%s %s%s %s", e.from, e.to, target, ask, fields(e.msg, dir))
}

// fields prints a message's type and scalar fields, bytes as their length,
// in the order the message declares them (not Range's, which the protobuf
// runtime varies from one build of the test binary to another, so that a
// seed would hash differently under -race, say), and dir, in strings, as
// $DIR.
func fields(m proto.Message, dir string) string {
	var b strings.Builder
	r := m.ProtoReflect()
	b.WriteString(string(r.Descriptor().Name()))
	b.WriteString("{")
	first := true
	fds := r.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if !r.Has(fd) || fd.IsList() || fd.IsMap() || fd.Kind() == protoreflect.MessageKind {
			continue
		}
		v := r.Get(fd)
		if !first {
			b.WriteString(" ")
		}
		first = false
		switch fd.Kind() {
		case protoreflect.BytesKind:
			fmt.Fprintf(&b, "%s=%dB", fd.Name(), len(v.Bytes()))
		case protoreflect.StringKind:
			s := v.String()
			if dir != "" {
				s = strings.ReplaceAll(s, dir, "$DIR")
			}
			if len(s) > 60 {
				s = s[:60] + "…"
			}
			fmt.Fprintf(&b, "%s=%q", fd.Name(), s)
		default:
			fmt.Fprintf(&b, "%s=%v", fd.Name(), v.Interface())
		}
		if b.Len() >= 200 {
			break
		}
	}
	b.WriteString("}")
	return b.String()
}
