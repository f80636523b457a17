package driverrun

// This file holds task progress: the driver's counts and the console
// progress bar drawn from them.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Progress counts the tasks of a driver's current job from its listener
// bus events. It is an endpoints.Listener.
type Progress struct {
	mu                   sync.Mutex
	job                  int64
	jobs                 int
	total, done, running int
	version              int
}

// OnEvent implements endpoints.Listener.
func (p *Progress) OnEvent(ev endpoints.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case endpoints.JobStart:
		p.job, p.total, p.done, p.running = e.JobID, e.NumTasks, 0, 0
		p.jobs++
	case endpoints.TaskStart:
		if e.JobID == p.job {
			p.running++
		}
	case endpoints.TaskEnd:
		if e.JobID == p.job {
			p.running = max(0, p.running-1)
			if e.State == messages.TaskState_TASK_STATE_FINISHED {
				p.done++
			}
		}
	default:
		return
	}
	p.version++
}

// Snapshot returns the current job's number (0-based), its task count and
// its finished and running tasks, and a version that changes with them.
func (p *Progress) Snapshot() (job, total, done, running, version int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(0, p.jobs-1), p.total, p.done, p.running, p.version
}

// ProgressBar formats Spark's console progress bar:
// "[Stage 0:=====>            (52 + 2) / 100]".
func ProgressBar(stage, total, done, running, width int) string {
	header := fmt.Sprintf("[Stage %d:", stage)
	tail := fmt.Sprintf("(%d + %d) / %d]", done, running, total)
	w := width - len(header) - len(tail)
	if w <= 0 || total <= 0 {
		return header + tail
	}
	percent := w * done / total
	var b strings.Builder
	b.WriteString(header)
	for i := 0; i < w; i++ {
		switch {
		case i < percent:
			b.WriteByte('=')
		case i == percent:
			b.WriteByte('>')
		default:
			b.WriteByte(' ')
		}
	}
	b.WriteString(tail)
	return b.String()
}

// NonTTYProgressInterval is the least time between two progress lines
// when the output is not a terminal (a log file, a pipe).
const NonTTYProgressInterval = time.Second

// consoleProgress prints a progress bar to w every interval while it
// changes: in place on a terminal, one line per change otherwise.
type consoleProgress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	get      func() (job, total, done, running, version int)
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	printed  bool
	shown    bool // the bar is on the terminal's current line
	redraw   bool // output cleared the bar: draw it again
}

func startConsoleProgress(w io.Writer, interval time.Duration, get func() (int, int, int, int, int)) *consoleProgress {
	return newConsoleProgress(w, IsTerminal(w), interval, get)
}

func newConsoleProgress(w io.Writer, tty bool, interval time.Duration, get func() (int, int, int, int, int)) *consoleProgress {
	c := &consoleProgress{w: w, tty: tty, interval: interval, get: get, stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// Above returns a writer for output that shares the terminal with the bar
// (the application's results): on a terminal it clears the bar before each
// write, so that the output starts on a line of its own; the bar is drawn
// again at its next change.
func (c *consoleProgress) Above(out io.Writer) io.Writer {
	if !c.tty {
		return out
	}
	return &aboveBar{c: c, out: out}
}

type aboveBar struct {
	c   *consoleProgress
	out io.Writer
}

func (a *aboveBar) Write(p []byte) (int, error) {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.c.shown {
		a.c.clearLocked()
		a.c.redraw = true
	}
	return a.out.Write(p)
}

// clearLocked erases the bar from the terminal line; c.mu is held.
func (c *consoleProgress) clearLocked() {
	if c.tty && c.shown {
		fmt.Fprintf(c.w, "\r%s\r", strings.Repeat(" ", 80))
		c.shown = false
	}
}

// IsTerminal reports whether w is a terminal (a character device).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (c *consoleProgress) loop() {
	defer close(c.done)
	t := time.NewTicker(c.interval)
	defer t.Stop()
	last := -1
	var lastLine time.Time
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		job, total, done, running, version := c.get()
		c.mu.Lock()
		redraw := c.redraw
		c.mu.Unlock()
		if version == last && !(redraw && done < total) || total == 0 {
			continue
		}
		if !c.tty && time.Since(lastLine) < NonTTYProgressInterval && done != total {
			continue
		}
		last, lastLine = version, time.Now()
		bar := ProgressBar(job, total, done, running, 80)
		c.mu.Lock()
		if c.tty {
			fmt.Fprintf(c.w, "\r%s", bar)
			c.shown, c.redraw = true, false
		} else {
			fmt.Fprintln(c.w, bar)
		}
		c.printed = true
		c.mu.Unlock()
	}
}

// Stop stops printing and clears the bar on a terminal.
func (c *consoleProgress) Stop() {
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		c.mu.Lock()
		c.clearLocked()
		c.mu.Unlock()
	})
}

// KeyShowConsoleProgress is Spark's spark.ui.showConsoleProgress: whether
// the driver draws the console progress bar. Unset, the bar is drawn only
// when the output is a terminal (a console, as the setting means); "true"
// draws it on a file or pipe too, as one line per change at most every
// NonTTYProgressInterval; "false" never draws it.
const KeyShowConsoleProgress = cluster.KeyShowConsoleProgress

// showConsoleProgress reports whether the bar is drawn on w under dc.
func showConsoleProgress(dc cluster.DriverConf, w io.Writer) bool {
	if !dc.ShowConsoleProgressSet {
		return IsTerminal(w)
	}
	return dc.ShowConsoleProgress
}
