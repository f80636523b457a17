package nodemanager

// This file holds a container's process as the node manager sees it: its
// folders, files and environment prepared, its start by the Launcher, its
// exit status and diagnostics, and its stop (SIGTERM, then SIGKILL).

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/internal/regularfile"
)

// containerSpec is what a node manager needs to start a container.
type containerSpec struct {
	id, appID string
	command   []string
	env       map[string]string
	files     map[string][]byte
	memoryMB  int64
	cores     int
	nodeHost  string
	// secret, when set, is handed to the process on file descriptor 3 (a
	// pipe): see ContainerSecretFile.
	secret []byte
	// passEnv names variables of the node manager's environment that the
	// container gets too (beside the defaults of containerBaseEnv).
	passEnv []string
	// user is the application's owner; webUI the node manager's web UI
	// base URL ("" when it runs none): they make the log URLs.
	user, webUI string
}

// containerBaseEnv are the variables of the node manager's environment that
// every container gets (YARN's yarn.nodemanager.env-whitelist); the rest of
// the node manager's environment stays its own.
var containerBaseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL", "TZ",
	"SPARKRPC_LOG_LEVEL", "SPARKRPC_LOG_FORMAT"}

// containerProc is a container's process, which its Launcher started:
// stopping it stops everything it started.
type containerProc struct {
	id, appID        string
	user             string // the application's owner
	proc             ContainerProcess
	pid              int
	workDir, logDir  string
	done             chan struct{}
	mu               sync.Mutex
	exitStatus       int
	diagnostics      string
	requested        bool // stopped on request
	requestedStatus  int
	requestedDiag    string
	stopOnce         sync.Once
	killGraceElapsed chan struct{}
	// What the node manager shows of it (RunningContainers).
	memoryMB int64
	cores    int
	started  time.Time
	// localized is set when it uses its application's localized
	// resources, which it releases when it ends.
	localized bool
}

// launchContainer prepares spec's container and has launcher start it:
// its working folder workDir (created, with spec.files written into it),
// its log folder logDir, and its environment, with GOMEMLIMIT set from the
// container's memory. Folders are created 0700 and files 0600: only the
// node manager's user reads them. exe replaces a first command word
// "sparkrpc".
func launchContainer(spec containerSpec, launcher Launcher, exe, workDir, logDir string) (*containerProc, error) {
	if len(spec.command) == 0 {
		return nil, fmt.Errorf("container %s: empty command", spec.id)
	}
	for _, d := range []string{workDir, logDir} {
		if err := privatefile.MkdirAll(d); err != nil {
			return nil, fmt.Errorf("container %s: %w", spec.id, err)
		}
	}
	for name, data := range spec.files {
		if name != filepath.Base(name) || name == "." || name == ".." {
			return nil, fmt.Errorf("container %s: invalid file name %q", spec.id, name)
		}
		if err := privatefile.WriteFile(filepath.Join(workDir, name), data); err != nil {
			return nil, fmt.Errorf("container %s: %w", spec.id, err)
		}
	}
	args := append([]string(nil), spec.command...)
	if args[0] == "sparkrpc" && exe != "" {
		args[0] = exe
	}
	proc, err := launcher.Launch(ContainerLaunch{ID: spec.id, AppID: spec.appID, Command: args,
		Env: containerEnv(spec, workDir, logDir), WorkDir: workDir, LogDir: logDir, Secret: spec.secret})
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", spec.id, err)
	}
	p := &containerProc{id: spec.id, appID: spec.appID, user: spec.user, proc: proc, pid: proc.Pid(), workDir: workDir, logDir: logDir,
		done: make(chan struct{}), killGraceElapsed: make(chan struct{})}
	go p.wait()
	return p, nil
}

func containerEnv(spec containerSpec, workDir, logDir string) []string {
	env := map[string]string{}
	for _, k := range append(append([]string(nil), containerBaseEnv...), spec.passEnv...) {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range spec.env {
		env[k] = v
	}
	if spec.memoryMB > 0 {
		env["GOMEMLIMIT"] = strconv.FormatInt(spec.memoryMB, 10) + "MiB"
	}
	env["CONTAINER_ID"] = spec.id
	if spec.nodeHost != "" {
		env["NM_HOST"] = spec.nodeHost
	}
	env["SPARKRPC_APP_ID"] = spec.appID
	env["LOG_DIRS"] = logDir
	env["PWD"] = workDir
	for k, v := range containerLogURLs(spec) {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func (p *containerProc) wait() {
	status := p.proc.Wait()
	p.mu.Lock()
	p.exitStatus = status
	switch {
	case p.requested:
		p.exitStatus = p.requestedStatus
		p.diagnostics = p.requestedDiag
		if status != 0 {
			p.diagnostics += fmt.Sprintf(" (process exit code %d)", status)
		}
	case status != 0:
		p.diagnostics = fmt.Sprintf("Exception from container-launch.\nContainer id: %s\nExit code: %d", p.id, status)
		if tail := tailFile(filepath.Join(p.logDir, "stderr"), 2048); tail != "" {
			p.diagnostics += "\nLast lines of stderr:\n" + tail
		}
	}
	p.mu.Unlock()
	close(p.done)
}

// status returns the exit status and diagnostics; valid once done is closed.
func (p *containerProc) status() (int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitStatus, p.diagnostics
}

// stop stops the container's process group: SIGTERM, then SIGKILL after
// grace. It returns at once; done is closed when the process is gone.
// exitStatus and diag are what the container reports (when it was still running).
func (p *containerProc) stop(grace time.Duration, exitStatus int, diag string) {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		p.mu.Lock()
		p.requested, p.requestedStatus, p.requestedDiag = true, exitStatus, diag
		p.mu.Unlock()
		_ = p.proc.Signal(syscall.SIGTERM)
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-p.done:
			case <-t.C:
				_ = p.proc.Signal(syscall.SIGKILL)
			}
		}()
	})
}

// tailFile returns the last max bytes of the file at path, from a line start.
func tailFile(path string, max int64) string {
	f, err := regularfile.OpenNoFollow(path) // the container's to replace
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}
