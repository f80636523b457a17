// This file holds Writer, the listener that writes a driver's event log
// off the listener bus's goroutine.

package eventlog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// ErrNotStarted is returned by Writer.Start when called twice or after
// Close.
var ErrNotStarted = errors.New("eventlog: writer already started or closed")

// defaultQueueBytes bounds the encoded events a Writer holds before its
// goroutine writes them: about 40,000 task events.
const defaultQueueBytes = 16 << 20

// flushInterval is how long written task events may stay in the buffers
// before they are flushed to the file, for a reader following the log.
const flushInterval = time.Second

// dropReportInterval is how often, at most, a Writer logs the events it
// dropped.
const dropReportInterval = time.Minute

// Writer is an endpoints.Listener that writes the events it receives as
// a JSON-lines event log. OnEvent only encodes the event into a bounded
// queue; the Writer's own goroutine writes the queue to the file. When the
// queue is full (the disk is slow or stuck), events are dropped, counted
// (Dropped) and logged at most once a minute: the listener bus, and the
// scheduler behind it, never wait for the disk.
//
// The application's id may be known only once its driver runs: events
// received before Start are held in the queue. Nothing is written until
// the application's ApplicationStart is received, which is written first
// (after SparkListenerLogStart), then the events held, in order.
//
// NewWriter, then Start (once), then Close (once) after the driver's bus
// has stopped. OnEvent may be called from any goroutine.
type Writer struct {
	cfg        Config
	log        zerolog.Logger
	now        func() time.Time
	queueBytes int
	wrap       func(io.Writer) io.Writer // a test's seam around each file

	mu        sync.Mutex
	enc       encoder
	head      []byte // LogStart and ApplicationStart, written first
	queue     []byte // the encoded events not yet written
	spare     []byte
	sawStart  bool // ApplicationStart was received
	started   bool
	closing   bool
	failed    bool // a write failed: the rest is dropped
	lastDrop  time.Time
	reported  int64
	dropped   atomic.Int64
	writeErrs atomic.Int64

	wake     chan struct{}
	done     chan struct{}
	file     *logFile // the goroutine's once started
	closeErr error    // set by the goroutine before done closes
}

// Option configures a Writer.
type Option func(*Writer)

// WithLogger sets the logger that reports dropped events and write
// errors (default: none).
func WithLogger(l zerolog.Logger) Option {
	return func(w *Writer) { w.log = l.With().Str("component", "eventlog").Logger() }
}

// NewWriter returns a Writer of cfg's log; nothing is written before
// Start.
func NewWriter(cfg Config, opts ...Option) *Writer {
	w := &Writer{cfg: cfg, log: zerolog.Nop(), now: time.Now, queueBytes: defaultQueueBytes,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if cfg.QueueBytes > 0 {
		w.queueBytes = cfg.QueueBytes
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Start creates the log of application appID (attemptID "" when it has
// none) in the configured folder and starts the Writer's goroutine. It
// fails, naming the key, when the folder does not exist or, without
// Config.Overwrite, when the application's log is already there
// (ErrLogExists).
func (w *Writer) Start(appID, attemptID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started || w.closing {
		return ErrNotStarted
	}
	f, err := createLog(w.cfg, appID, attemptID, w.wrap)
	if err != nil {
		return err
	}
	w.file, w.started = f, true
	w.log.Info().Str("path", f.path).Msg("Logging events to " + f.path)
	go w.run()
	return nil
}

// OnEvent implements endpoints.Listener: it encodes ev into the queue, or
// drops it when the queue is full.
func (w *Writer) OnEvent(ev endpoints.Event) {
	w.mu.Lock()
	if w.closing || w.failed {
		if w.failed && !w.closing {
			w.writeErrs.Add(1)
		}
		w.mu.Unlock()
		return
	}
	if as, ok := ev.(endpoints.ApplicationStart); ok && !w.sawStart {
		w.head = appendLogStart(w.head, as.Version)
		w.head = w.enc.appendEvent(w.head, as)
		w.sawStart = true
		w.mu.Unlock()
		w.signal()
		return
	}
	n := len(w.queue)
	w.queue = w.enc.appendEvent(w.queue, ev)
	if len(w.queue) > w.queueBytes {
		w.queue = w.queue[:n]
		report := w.dropLocked()
		w.mu.Unlock()
		report()
		return
	}
	w.mu.Unlock()
	w.signal()
}

func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// dropLocked counts a dropped event and returns the report to log once
// mu is released: at once for the first drop, then at most once every
// dropReportInterval.
func (w *Writer) dropLocked() (report func()) {
	total := w.dropped.Add(1)
	now := w.now()
	if !w.lastDrop.IsZero() && now.Sub(w.lastDrop) < dropReportInterval {
		return func() {}
	}
	n := total - w.reported
	w.lastDrop, w.reported = now, total
	return func() {
		w.log.Warn().Int64("dropped", n).Int64("total_dropped", total).Int("queue_bytes", w.queueBytes).
			Msg("Dropping events from the event log: the disk does not keep up")
	}
}

// Dropped returns how many events were not written: dropped because the
// queue was full, or lost to a write error.
func (w *Writer) Dropped() int64 { return w.dropped.Load() + w.writeErrs.Load() }

// run writes the queue to the file until Close. Written events are
// flushed to the file within flushInterval, for a reader following it.
func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(flushInterval)
	timer.Stop()
	dirty := false
	for {
		w.mu.Lock()
		var head, batch []byte
		if w.sawStart || w.closing {
			head, w.head = w.head, nil
			batch, w.queue, w.spare = w.queue, w.spare[:0], nil
		}
		closing := w.closing
		w.mu.Unlock()
		if len(head)+len(batch) > 0 {
			w.write(head)
			w.write(batch)
			if !dirty {
				timer.Reset(flushInterval)
			}
			dirty = true
		}
		if batch != nil {
			w.mu.Lock()
			w.spare = batch[:0]
			w.mu.Unlock()
		}
		if closing {
			w.finish()
			return
		}
		select {
		case <-w.wake:
		case <-timer.C:
			w.flush()
			dirty = false
		}
	}
}

// write writes lines to the file; after a write error, lines are counted
// as lost instead.
func (w *Writer) write(lines []byte) {
	if len(lines) == 0 {
		return
	}
	if !w.isFailed() {
		err := w.file.write(lines)
		if err == nil {
			return
		}
		w.fail(err)
	}
	w.writeErrs.Add(int64(countLines(lines)))
}

func (w *Writer) flush() {
	if w.isFailed() {
		return
	}
	if err := w.file.flush(); err != nil {
		w.fail(err)
	}
}

func (w *Writer) isFailed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// fail logs the log's first write error; the events received from now on
// are dropped and counted.
func (w *Writer) fail(err error) {
	w.mu.Lock()
	w.failed = true
	w.mu.Unlock()
	w.log.Error().Err(err).Str("path", w.file.path).
		Msg("Writing the event log failed; the events from now on are not logged and are counted as dropped")
}

// finish closes the file and marks the log finished.
func (w *Writer) finish() {
	failed := w.isFailed()
	if err := w.file.finish(failed); err != nil && !failed {
		w.closeErr = err
		w.log.Error().Err(err).Str("path", w.file.path).Msg("Closing the event log failed")
	}
}

// Close writes the events received, closes the log and marks it finished
// (the in-progress suffix removed). It returns ctx's cause when ctx ends
// first: the Writer's goroutine then ends once the write it waits for
// returns, leaving the log in progress. Events received after Close are
// ignored. A Writer never started has nothing to write.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closing = true
	started := w.started
	w.mu.Unlock()
	if !started {
		return nil
	}
	w.signal()
	select {
	case <-w.done:
		return w.closeErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// countLines returns the number of lines in p.
func countLines(p []byte) int { return bytes.Count(p, []byte{'\n'}) }
