package nodemanager

// This file holds the default Launcher: each container a child process of
// the node manager, leading a process group of its own, with its stdout
// and stderr in its log folder and its application's secret on a pipe.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/netty"
)

// processLauncher starts containers as child processes of this one.
type processLauncher struct{}

// childProcess is a container's child process: the leader of its own
// process group, so that a signal reaches everything it started.
type childProcess struct {
	id             string // the container's
	cmd            *exec.Cmd
	stdout, stderr *os.File
}

// Launch implements Launcher: it starts c's command in c.WorkDir, with
// stdout and stderr in files of c.LogDir (0600).
func (processLauncher) Launch(c ContainerLaunch) (ContainerProcess, error) {
	stdout, err := privatefile.Create(filepath.Join(c.LogDir, "stdout"))
	if err != nil {
		return nil, err
	}
	stderr, err := privatefile.Create(filepath.Join(c.LogDir, "stderr"))
	if err != nil {
		stdout.Close()
		return nil, err
	}
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.WorkDir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = c.Env
	cmd.SysProcAttr = containerProcAttr()
	if len(c.Secret) > 0 {
		r, err := netty.SecretPipe(c.Secret)
		if err != nil {
			stdout.Close()
			stderr.Close()
			return nil, err
		}
		defer r.Close() // the child has its own copy once started
		cmd.ExtraFiles = []*os.File{r}
	}
	if err := cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		return nil, fmt.Errorf("cannot start %q: %w", c.Command[0], err)
	}
	return &childProcess{id: c.ID, cmd: cmd, stdout: stdout, stderr: stderr}, nil
}

// Pid implements ContainerProcess.
func (p *childProcess) Pid() int { return p.cmd.Process.Pid }

// Wait implements ContainerProcess: once the leader has exited, the
// stragglers of its group (children it left behind) are killed too, and
// so are the processes of the container that left the group (escapees),
// and Wait returns when they are gone (boundedly: the kernel gives no
// notification).
func (p *childProcess) Wait() int {
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
	pid := p.Pid()
	grouped := syscall.Kill(-pid, syscall.SIGKILL) == nil
	escaped := p.signalEscapees(syscall.SIGKILL)
	if grouped || escaped > 0 {
		deadline := time.Now().Add(2 * time.Second)
		for (groupAlive(pid) || len(escapees(p.id, pid)) > 0) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return status
}

// Signal implements ContainerProcess: sig goes to the whole process group,
// and to the processes of the container that left it.
func (p *childProcess) Signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid(), sig)
	if p.signalEscapees(sig) > 0 {
		return nil
	}
	return err
}

// signalEscapees sends sig to the container's processes outside its
// process group, and returns how many it signalled.
func (p *childProcess) signalEscapees(sig syscall.Signal) int {
	n := 0
	for _, pid := range escapees(p.id, p.Pid()) {
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

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
		if state, pgrp, ok := procState(e.Name()); ok && state != "Z" && pgrp == pgid {
			return true
		}
	}
	return false
}

// procState returns the state and process group of process pid, from
// /proc/PID/stat ("pid (comm) state ppid pgrp ...").
func procState(pid string) (state string, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}
