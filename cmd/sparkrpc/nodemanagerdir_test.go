package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// Without --dir a node manager's folder is under the shared temporary
// folder. Its name must not be one another user can create first: a
// folder planted at sparkrpc-nodemanager-PORT (here mode 0777, as another
// user would leave it) must not become the node's folder, which holds the
// containers' working folders, programs and logs and must be private
// ("the node managers' folders and files are private to their user").
func TestNodeManagerDefaultDirCannotBePlanted(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	planted := filepath.Join(os.TempDir(), fmt.Sprintf("sparkrpc-nodemanager-%d", port))
	if err := os.Mkdir(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	var folder string
	t.Cleanup(func() {
		os.RemoveAll(planted)
		if folder != "" {
			os.RemoveAll(folder)
		}
	})
	nm := start(t, marker, "nodemanager", "--rm", c.addr, "--port", strconv.Itoa(port), "--conf", "spark.port.maxRetries=0",
		"--webui-port", "-1", "--memory", "1g", "--cores", "1")
	re := regexp.MustCompile(`registered with rm://\S+ \(.*folder (\S+)\)`)
	testutil.Eventually(t, 30*time.Second, "the node manager to register", func() bool {
		if m := re.FindStringSubmatch(nm.stdout.String()); m != nil {
			folder = m[1]
			return true
		}
		return false
	})
	st, err := os.Stat(folder)
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	nm.wait(t, 30*time.Second)
	c.stop(t)
	if folder == planted || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the node manager took %s (mode %v) as its folder: the folder planted at its predictable name was adopted as it was",
			folder, st.Mode().Perm())
	}
}
