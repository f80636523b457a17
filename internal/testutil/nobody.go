//go:build unix

package testutil

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// envAsNobody marks the copy of a test binary that AsNobody started.
const envAsNobody = "SPARKRPC_TEST_AS_NOBODY"

// AsNobody reports whether the calling test goes on in this process: it
// does when it runs as a user other than root. Root ignores file modes, so
// as root AsNobody runs the test again, in a copy of the test binary, as
// user nobody (uid and gid 65534, with TMPDIR and HOME in a folder of its
// own), fails t with the copy's output when that run fails, and returns
// false:
//
//	if !testutil.AsNobody(t) {
//		return
//	}
func AsNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv(envAsNobody) != "" {
		return true
	}
	dir, err := os.MkdirTemp("", "nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "test.bin")
	if err := copyExecutable(os.Args[0], exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envAsNobody+"=1", "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	return false
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
