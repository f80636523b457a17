package launcher

// This file holds the primary resource: which program holds the
// application, and the hand-over to another program's submit.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/netty"
)

// InternalResource is the primary resource that names the applications
// compiled into the program that runs submit (Spark's "spark-internal").
// On a master that starts containers, the program ships itself, unless it
// is installed on the cluster (WithInstalledOnCluster: the sparkrpc
// command), whose node managers then run their own copy.
const InternalResource = "spark-internal"

// envSubmitProgram is set in the environment of a program whose submit
// this one hands over to (runOtherProgram): the program it expects to be.
// A program that finds it names another program refuses to hand over
// again, so that no chain of programs can submit in a loop.
const envSubmitProgram = "SPARKRPC_SUBMIT_PROGRAM"

// primary is the resolved primary resource.
type primary struct {
	// program is the program's absolute path; empty for InternalResource.
	program string
	// other is true when the program is not this one: its own submit must
	// run the application.
	other bool
}

// resolvePrimary checks the primary resource, positional[0]: the
// InternalResource, or an executable file. class is --class, for the
// hint a missing resource gets.
func resolvePrimary(class string, positional []string) (primary, error) {
	if len(positional) == 0 {
		return primary{}, cli.Usagef("missing the primary resource: give the path of a program built on package launcher, "+
			"or %s for the applications compiled into this one (%s)%s", InternalResource, appList(), internalHint(class, positional))
	}
	name := positional[0]
	if name == InternalResource {
		return primary{}, nil
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return primary{}, cli.Usagef("primary resource %q: %v", name, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return primary{}, cli.Usagef("primary resource %q: no such program: give the path of a program built on package launcher, "+
			"or %s for the applications compiled into this one%s", name, InternalResource, internalHint(class, positional))
	case err != nil:
		return primary{}, cli.Usagef("primary resource %q: %v", name, err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return primary{}, cli.Usagef("primary resource %q is not an executable program (mode %s): give a program built on package launcher", name, st.Mode())
	}
	self, err := os.Executable()
	if err != nil {
		return primary{}, fmt.Errorf("cannot find this program's executable: %w", err)
	}
	if selfSt, err := os.Stat(self); err == nil && os.SameFile(st, selfSt) {
		return primary{program: abs}, nil
	}
	if ok, err := isLauncherProgram(abs); err != nil {
		return primary{}, cli.Usagef("primary resource %q: %v", name, err)
	} else if !ok {
		return primary{}, cli.Usagef("primary resource %q is not a program built on package launcher: its main must hand its "+
			"command line over to launcher.Run, which plays the roles a cluster starts it in", name)
	}
	if want := os.Getenv(envSubmitProgram); want != "" {
		return primary{}, fmt.Errorf("this program (%s) was started as the submit of %s, but its primary resource is another program, %s: "+
			"a program built on package launcher recognises itself; was %s built on it?", self, want, abs, want)
	}
	return primary{program: abs, other: true}, nil
}

// internalHint suggests InternalResource when --class, or else the first
// argument, is an application of this program, as in the command lines
// submit took before it needed a primary resource.
func internalHint(class string, positional []string) string {
	if len(positional) > 0 && looksLikePath(positional[0]) {
		// The user meant a program: passing its path to a compiled-in
		// application would not help.
		return ""
	}
	switch {
	case class != "" && hasApp(class):
		return fmt.Sprintf(": submit [options] --class %s %s", class, strings.Join(append([]string{InternalResource}, positional...), " "))
	case class == "" && len(positional) > 0 && hasApp(positional[0]):
		return fmt.Sprintf(": submit [options] --class %s %s", positional[0], strings.Join(append([]string{InternalResource}, positional[1:]...), " "))
	}
	return ""
}

// looksLikePath reports whether a primary resource names a file by its
// path rather than being an application's argument or name.
func looksLikePath(name string) bool {
	return strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) || strings.HasPrefix(name, ".")
}

// chooseApplication returns the application to run: --class, which must
// be one of this program's applications, or the only one it registered.
func chooseApplication(class string, positional []string) (string, error) {
	apps := cluster.Apps()
	if class == "" {
		if len(apps) == 1 {
			return apps[0], nil
		}
		if len(positional) > 1 && hasApp(positional[1]) {
			return "", cli.Usagef("missing application: give its name with --class, as in: submit [options] --class %s %s %s",
				positional[1], positional[0], strings.Join(positional[2:], " "))
		}
		return "", cli.Usagef("missing application: give its name with --class (one of: %s)", appList())
	}
	if !hasApp(class) {
		return "", cli.Usagef("unknown application %q given to --class (this program has: %s)", class, appList())
	}
	return class, nil
}

// runOtherProgram hands the submission over to program, another program
// built on package launcher, which holds the application: it runs the
// program's own submit with the same command line (raw) and returns its
// exit status. SIGINT and SIGTERM reach it (ctx ends when one arrives).
func runOtherProgram(ctx context.Context, program string, raw []string, stdout, stderr io.Writer) error {
	cmd := exec.Command(program, append([]string{"submit"}, raw...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.SysProcAttr = handOverProcAttr()
	env, secret, err := handOverEnv(program)
	if err != nil {
		return err
	}
	cmd.Env = env
	if secret != nil {
		cmd.ExtraFiles = []*os.File{secret}
	}
	err = cmd.Start()
	if secret != nil {
		secret.Close() // the child has its own copy once started
	}
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("cannot start the primary resource %s: %w", program, err)}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case <-done:
		}
	}()
	err = cmd.Wait()
	close(done)
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// It could say nothing (SIGKILL, the OOM killer): say it, and
			// exit as a shell does for a program a signal ended.
			return &cli.ExitError{Code: 128 + int(ws.Signal()),
				Err: fmt.Errorf("the primary resource %s was killed by signal %d (%v)", program, int(ws.Signal()), ws.Signal())}
		}
		// The program printed its own messages.
		return &cli.ExitError{Code: max(xe.ExitCode(), 1), Err: errSilent}
	}
	return err
}

// handOverEnv returns the environment of program's submit: this process's,
// with the cluster's secret, when SPARKRPC_AUTH_SECRET or the file
// SPARKRPC_AUTH_SECRET_FILE names gives it, moved from the environment to a
// pipe (returned, for file descriptor 3) that SPARKRPC_AUTH_SECRET_FILE
// names. A secret is never in the environment of
// a process sparkrpc starts, where others who may read /proc/PID/environ
// could.
func handOverEnv(program string) ([]string, *os.File, error) {
	secret := os.Getenv(cli.EnvAuthSecret)
	if path := os.Getenv(cli.EnvAuthSecretFile); secret == "" && path != "" {
		// It may name a pipe this process inherited (/proc/self/fd/N, a
		// shell's <(...)), which the program does not inherit (Run marks
		// inherited descriptors close-on-exec) and which can be read only
		// once: the secret goes on as SPARKRPC_AUTH_SECRET's does. A file
		// that cannot be read is left to the program, which reports it
		// only if it needs the secret.
		if b, err := netty.ReadSecretFile(path); err == nil {
			secret = string(b)
		}
	}
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secret != "" && (name == cli.EnvAuthSecret || name == cli.EnvAuthSecretFile) || name == envSubmitProgram {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, envSubmitProgram+"="+program)
	if secret == "" {
		return env, nil, nil
	}
	r, err := netty.SecretPipe([]byte(secret))
	if err != nil {
		return nil, nil, fmt.Errorf("$%s: %w", cli.EnvAuthSecret, err)
	}
	return append(env, cli.EnvAuthSecretFile+"="+cluster.ContainerSecretFile), r, nil
}

// errSilent is the error of a command whose messages were already printed.
var errSilent = errors.New("")

// hasApp reports whether this program registered the application name.
func hasApp(name string) bool {
	_, ok := cluster.LookupApp(name)
	return ok
}

// programMark is in every program built on this package (isLauncherProgram
// uses it, and submit uses isLauncherProgram).
const programMark = "sparkrpc-launcher-program/1"

// isLauncherProgram reports whether the executable at path holds
// programMark, which only programs built on this package do: a program
// whose main never hands over to Run would take submit's command line as
// its own.
func isLauncherProgram(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	mark := []byte(programMark)
	buf := make([]byte, 1<<20)
	keep := 0 // bytes of the previous chunk kept, in case the mark spans two
	for {
		n, err := io.ReadFull(f, buf[keep:])
		if bytes.Contains(buf[:keep+n], mark) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		keep = len(mark) - 1
		copy(buf, buf[len(buf)-keep:])
	}
}
