package nodemanager

// This file holds a container's child process: its launch in a process
// group of its own, its exit status, and its stop (SIGTERM, then SIGKILL).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
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

// containerProc is a container's process: the leader of its own process
// group, so that stopping it stops everything it started.
type containerProc struct {
	id, appID        string
	user             string // the application's owner
	cmd              *exec.Cmd
	pid              int
	workDir, logDir  string
	done             chan struct{}
	mu               sync.Mutex
	exitStatus       int
	diagnostics      string
	requested        bool // stopped on request
	requestedStatus  int
	requestedDiag    string
	stdout, stderr   *os.File
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

// launchContainer starts spec as a child process of this one. The process
// runs in workDir (created, with spec.files written into it), with stdout
// and stderr in logDir, and with GOMEMLIMIT set from the container's memory.
// Folders are created 0700 and files 0600: only the node manager's user
// reads them. exe replaces a first command word "sparkrpc".
func launchContainer(spec containerSpec, exe, workDir, logDir string) (*containerProc, error) {
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
	stdout, err := privatefile.Create(filepath.Join(logDir, "stdout"))
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", spec.id, err)
	}
	stderr, err := privatefile.Create(filepath.Join(logDir, "stderr"))
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("container %s: %w", spec.id, err)
	}
	args := append([]string(nil), spec.command...)
	if args[0] == "sparkrpc" && exe != "" {
		args[0] = exe
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = workDir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = containerEnv(spec, workDir, logDir)
	cmd.SysProcAttr = containerProcAttr()
	if len(spec.secret) > 0 {
		r, err := secretPipe(spec.secret)
		if err != nil {
			stdout.Close()
			stderr.Close()
			return nil, fmt.Errorf("container %s: %w", spec.id, err)
		}
		defer r.Close() // the child has its own copy once started
		cmd.ExtraFiles = []*os.File{r}
	}
	if err := cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		return nil, fmt.Errorf("container %s: cannot start %q: %w", spec.id, args[0], err)
	}
	p := &containerProc{id: spec.id, appID: spec.appID, user: spec.user, cmd: cmd, pid: cmd.Process.Pid, workDir: workDir, logDir: logDir,
		done: make(chan struct{}), stdout: stdout, stderr: stderr, killGraceElapsed: make(chan struct{})}
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

// secretPipe returns the read end of a pipe that holds secret and is
// closed for writing. A secret is far smaller than a pipe's buffer, so the
// write does not block.
func secretPipe(secret []byte) (*os.File, error) {
	if len(secret) > 4096 {
		return nil, fmt.Errorf("the application secret has %d bytes, more than 4096", len(secret))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(secret)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (p *containerProc) wait() {
	err := p.cmd.Wait()
	p.stdout.Close()
	p.stderr.Close()
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = cluster.ExitSignalBase + int(ws.Signal())
		} else {
			status = ee.ExitCode()
		}
	} else if err != nil {
		status = cluster.ContainerExitInvalid
	}
	// Stragglers of the group (children the leader left behind) go too; wait
	// (boundedly: the kernel gives no notification) until they are gone.
	if syscall.Kill(-p.pid, syscall.SIGKILL) == nil {
		deadline := time.Now().Add(2 * time.Second)
		for groupAlive(p.pid) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
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
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-p.done:
			case <-t.C:
				_ = syscall.Kill(-p.pid, syscall.SIGKILL)
			}
		}()
	})
}

// tailFile returns the last max bytes of the file at path, from a line start.
func tailFile(path string, max int64) string {
	f, err := os.Open(path)
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

func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// groupAlive reports whether a process of the process group pgid is still
// running (zombies waiting for their new parent to reap them do not count).
func groupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range ents {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}
