package kubetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is a control-plane component: a child process leading its own process group, with
// stdout and stderr in LOGDIR/NAME.log. On Linux it is killed (SIGKILL) if the process that started it dies.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // the exit error, set before done is closed
}

func startProcess(name, bin, logDir string, args ...string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("kubetest: starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, SIGKILL after grace, and waits for the process. It
// returns an error when SIGKILL was needed or the process had already failed on its own.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		if p.err != nil {
			return fmt.Errorf("kubetest: %s had exited before Stop: %w", p.name, p.err)
		}
		return nil
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		// The leader is gone; take down anything left in its group.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return nil
	case <-t.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kubetest: %s (pid %d) survived SIGKILL for 10s", p.name, pgid)
	}
	return fmt.Errorf("kubetest: %s did not stop within %s of SIGTERM and was killed", p.name, grace)
}

// logTail is the last n lines of the process's log.
func (p *process) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return p.name + " log (last lines):\n" + strings.TrimSpace(string(bytes.Join(lines, []byte("\n"))))
}
