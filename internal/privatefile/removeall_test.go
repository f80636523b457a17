package privatefile

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// RemoveAll removes a folder whose own mode denies reading it (a container
// that ran `chmod 000 .` in its working folder, which the node manager then
// removes). The walk through an os.Root of the folder must open it, so its
// mode is changed first, from its parent. Before, RemoveAll gave up with
// the permission error. Root ignores modes: as root the test runs itself
// again as nobody.
func TestRemoveAllUnreadableTopFolder(t *testing.T) {
	const env = "PRIVATEFILE_UNREADABLE_TOP_DIR"
	if dir := os.Getenv(env); dir != "" {
		removeUnreadableTop(t, dir)
		return
	}
	if os.Getuid() != 0 {
		removeUnreadableTop(t, t.TempDir())
		return
	}
	base, err := os.MkdirTemp("", "pfnobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "test.bin")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dst.Close()
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestRemoveAllUnreadableTopFolder$", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), env+"="+work)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func removeUnreadableTop(t *testing.T, base string) {
	dir := filepath.Join(base, "container_1")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o000); err != nil { // the container's `chmod 000 .`
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700) // let the cleanup remove it
	if err := RemoveAll(dir); err != nil {
		t.Fatalf("RemoveAll of a folder of mode 0000: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("RemoveAll returned nil and %s is still there (%v)", dir, err)
	}
}
