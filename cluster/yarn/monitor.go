package yarn

// This file holds how a submission follows its application: the report
// lines it prints, the driver's output it copies back from an embedded
// cluster, and the task progress a client-mode driver reports.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/driverrun"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
)

// reportPrinter prints state changes and task progress of a submitted
// application (Spark's Client.monitorApplication output).
type reportPrinter struct {
	w        io.Writer
	tty      bool
	hideLogs bool // the logs are in a folder removed at exit
	noTasks  bool // the driver runs here and draws its own progress bar
	mu       sync.Mutex
	last     time.Time // of the last progress line (not on a terminal)
}

func (p *reportPrinter) StateChanged(r *rmclient.AppReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 80))
	}
	fmt.Fprintf(p.w, "Application report for %s (state: %s)\n", r.ID, r.State)
	if r.State == cluster.StateRunning || r.State.Terminal() {
		c := *r
		if p.hideLogs {
			c.AMLogDir = ""
		}
		fmt.Fprintln(p.w, c.String())
	}
}

func (p *reportPrinter) InfoChanged(r *rmclient.AppReport) {
	if r.State != cluster.StateRunning || r.TasksTotal == 0 || p.noTasks {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	bar := driverrun.ProgressBar(0, r.TasksTotal, r.TasksDone, r.TasksRunning, 80)
	if p.tty {
		fmt.Fprintf(p.w, "\r%s", bar)
	} else if time.Since(p.last) >= driverrun.NonTTYProgressInterval || r.TasksDone == r.TasksTotal {
		p.last = time.Now()
		fmt.Fprintln(p.w, bar)
	}
}

// printDriverOutput copies the driver container's stdout (on this machine,
// for the embedded cluster) to w.
func printDriverOutput(w io.Writer, r *rmclient.AppReport) {
	_, dir, ok := strings.Cut(r.AMLogDir, ":")
	if !ok {
		return
	}
	if i := strings.Index(dir, "/"); i > 0 {
		dir = dir[i:]
	}
	b, err := os.ReadFile(filepath.Join(dir, "stdout"))
	if err == nil {
		_, _ = w.Write(b)
	}
}

// reportDriverProgress sends the driver's task progress to the resource
// manager every interval while it changes, and once more when stop closes.
func reportDriverProgress(client *rmclient.Client, appID string, prog *driverrun.Progress, interval time.Duration, stop <-chan struct{}) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	last := -1
	send := func() {
		_, total, done, running, version := prog.Snapshot()
		if version != last {
			last = version
			_ = client.ReportProgress(appID, total, done, running)
		}
	}
	for {
		select {
		case <-stop:
			send()
			return
		case <-t.C:
			send()
		}
	}
}
